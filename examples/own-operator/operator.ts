// The operator's entrypoint (RuntimeImage bundles it): the program in team-operator.ts, run as kruise-manager runs.
import { run } from 'kruise-ha-runtime';
import { teamOperator } from './team-operator.js';

void run(teamOperator);
