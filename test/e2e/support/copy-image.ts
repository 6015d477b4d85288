/**
 * Copies an image inside one registry under another name (blobs mounted, manifest put again), as
 * a platform team mirrors a build under the name its manifests use.
 */
import { RegistryClient } from '../../../lib/image/registry.js';
import { RegistryHttp } from '../../../lib/image/registry-http.js';

interface Manifest {
  config: { digest: string };
  layers: Array<{ digest: string }>;
}

/** `from` and `to` are `repository:tag` (or `repository@digest` for `from`) inside `registry`. */
export async function copyImage(registry: string, from: string, to: string): Promise<string> {
  const client = new RegistryClient(new RegistryHttp(registry, { plainHttp: [registry] }));
  const at = from.includes('@') ? from.indexOf('@') : from.lastIndexOf(':');
  const [fromRepo, fromRef] = [from.slice(0, at), from.slice(at + 1)];
  const [toRepo, toTag] = [to.slice(0, to.lastIndexOf(':')), to.slice(to.lastIndexOf(':') + 1)];
  const action = `copying ${registry}/${from} to ${registry}/${to}`;
  const got = await client.getManifest(fromRepo, fromRef, action);
  if (!got) throw new Error(`${action}: ${registry}/${from} does not exist`);
  const manifest = JSON.parse(Buffer.from(got.bytes).toString('utf8')) as Manifest;
  for (const digest of [manifest.config.digest, ...manifest.layers.map((l) => l.digest)]) {
    if (!(await client.mountBlob(toRepo, digest, fromRepo, action)))
      await client.uploadBlob(toRepo, digest, [await client.getBlob(fromRepo, digest, action)], action);
  }
  return client.putManifest(toRepo, toTag, got.mediaType, got.bytes, action);
}
