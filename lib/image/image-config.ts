/**
 * The image config (what `docker inspect` shows) of base + app layer: the base's config with
 * our user, entrypoint, env, labels and one more layer and history entry. Deterministic: it
 * depends only on the base config bytes, the fragment and the layer's diff_id.
 */
import type { ConfigFragment } from './build-context.js';

/** The parts of an OCI / Docker image config we read or write; the rest passes through. */
export interface ImageConfig {
  architecture?: string;
  os?: string;
  variant?: string;
  created?: string;
  config?: {
    User?: string;
    Env?: string[];
    Entrypoint?: string[] | null;
    Cmd?: string[] | null;
    WorkingDir?: string;
    Labels?: Record<string, string> | null;
    [key: string]: unknown;
  };
  rootfs: { type: 'layers'; diff_ids: string[] };
  history?: { created?: string; created_by?: string; comment?: string; empty_layer?: boolean }[];
  [key: string]: unknown;
}

export const BASE_NAME_LABEL = 'org.opencontainers.image.base.name';
export const BASE_DIGEST_LABEL = 'org.opencontainers.image.base.digest';

export interface AppLayerInput {
  readonly fragment: ConfigFragment;
  readonly diffId: string;
  /** The base as written in image.json, and the digest publish resolved it to. */
  readonly baseName: string;
  readonly baseDigest: string;
  /** Files of the layer, for the history entry. */
  readonly files: readonly string[];
}

export function appendAppLayer(base: ImageConfig, input: AppLayerInput): ImageConfig {
  const f = input.fragment;
  const env = mergeEnv(base.config?.Env ?? [], f.env);
  const baseContainerConfig = { ...base.config };
  delete baseContainerConfig.Cmd;
  return {
    ...base,
    created: f.created,
    config: {
      ...baseContainerConfig,
      User: f.user,
      Env: env,
      Entrypoint: f.entrypoint,
      // Docker resets an inherited CMD when ENTRYPOINT changes; node's CMD ["node"] would
      // otherwise become an argument of our entrypoint.
      ...(f.cmd.length ? { Cmd: f.cmd } : {}),
      WorkingDir: f.workingDir,
      Labels: {
        ...base.config?.Labels,
        ...f.labels,
        [BASE_NAME_LABEL]: input.baseName,
        [BASE_DIGEST_LABEL]: input.baseDigest,
      },
    },
    rootfs: { type: 'layers', diff_ids: [...base.rootfs.diff_ids, input.diffId] },
    history: [
      ...(base.history ?? []),
      {
        created: f.created,
        created_by: `kruise-ha image publish: COPY ${input.files.join(' ')} /${input.files[0].split('/')[0]}/`,
        comment: 'kruise-ha runtime bundle',
      },
    ],
  };
}

/** Our entries replace the base's of the same name (as ENV does), the others keep their order. */
function mergeEnv(base: readonly string[], ours: readonly string[]): string[] {
  const name = (e: string) => e.split('=')[0];
  const overridden = new Set(ours.map(name));
  return [...base.filter((e) => !overridden.has(name(e))), ...ours];
}
