/**
 * A user's program on the runtime, the whole of it: a flag, a mutating webhook and a readiness
 * check registered through run(), which owns the rest (flags, certificates, signals, exit codes).
 * test/integration/user-program.test.ts starts it as a process, as a pod would.
 */
import { mutating, patch, run } from '../../../lib/runtime/index.js';

/** Where the program serves its webhook, and the label it sets there. */
const GREETING_PATH = '/mutate-greeting';
const GREETING_LABEL = 'greeting';

await run({
  name: 'greeter',
  description: 'labels the objects it is shown with a greeting.',
  flags: { greeting: { type: 'string', default: 'hello', help: `value of the ${GREETING_LABEL} label` } },
  register(manager, flags) {
    manager.registerWebhook(
      GREETING_PATH,
      mutating((request) =>
        patch(
          (request.object?.metadata as { labels?: Record<string, string> } | undefined)?.labels
            ? [{ op: 'add', path: `/metadata/labels/${GREETING_LABEL}`, value: flags.greeting }]
            : [{ op: 'add', path: '/metadata/labels', value: { [GREETING_LABEL]: flags.greeting } }],
        ),
      ),
    );
    manager.addReadinessCheck('greeter', () => undefined);
  },
});
