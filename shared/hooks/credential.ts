import { openCredentialInConstantWork, type CredentialKind } from '../credentials/repository.js';
import { integrationsOf } from '../integrations.js';
import type { Runtime } from '../runtime.js';
import { isUuid } from './hook.js';

/**
 * The credential of `kind` of the project a hook's path names (`projectId` as sent), opened in constant work (DESIGN
 * D22): anything but a UUID is looked up as no project, and an unknown or unconnected project decrypts a decoy, so
 * neither the answer nor its timing tells whether a project exists. Null when there is none.
 */
export function openHookCredential(runtime: Runtime, projectId: string, kind: CredentialKind) {
  return openCredentialInConstantWork(
    runtime.store,
    integrationsOf(runtime).keyEncryptionKey,
    isUuid(projectId) ? projectId.toLowerCase() : 'not-a-project',
    kind,
  );
}
