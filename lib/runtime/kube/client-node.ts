/**
 * The runtime's one import point for client-node's values, by deep path rather than the package index: the index
 * evaluates every module client-node has (exec, attach, port-forward, cp, metrics, ws, tar-stream, …) at start-up,
 * and the runtime needs three classes. Type imports may keep using the index; they are erased.
 */
export { KubeConfig } from '@kubernetes/client-node/dist/config.js';
export { ApiException } from '@kubernetes/client-node/dist/gen/apis/exception.js';
export { V1MicroTime } from '@kubernetes/client-node/dist/types.js';
