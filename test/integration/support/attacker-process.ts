/**
 * The attacker process of {@link attackProcess} (attacks.ts): receives `{ target, specs }`, starts
 * the attacks, answers `{ name }`; on 'stop' stops them, answers their stats and exits.
 */
import { startAttack, type AttackSpec, type Target } from './attacks.js';

process.once('message', (m: { target: Target; specs: AttackSpec[] }) => {
  const attack = startAttack(m.target, m.specs);
  process.send!({ name: attack.name });
  process.once('message', () => {
    void attack.stop().then((stats) => process.send!(stats, () => process.exit(0)));
  });
});
process.once('disconnect', () => process.exit(0)); // the parent is gone: so is the attack
