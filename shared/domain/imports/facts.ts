import { defineFacts } from '../define-facts.js';

/**
 * Imports' keys (DESIGN D34; no abilities of their own: the interface fixes the catalogue). A project's import jobs and
 * their list entries share the project's imports partition; a job still to finish is in a sparse index by the time of
 * its last progress, so the sweeper restarts a stalled one.
 */
export const importsFacts = defineFacts({
  keys: {
    /** An import job in its project's imports partition. */
    importJob: (teamId: string, projectId: string, importId: string) => ({
      pk: `TEAM#${teamId}#PROJECT#${projectId}#IMPORTS`,
      sk: `IMPORT#${importId}`,
    }),
    /** An import's place in its project's list, newest first by creation time (then id). */
    importListEntry: (teamId: string, projectId: string, createdAtIso: string, importId: string) => ({
      pk: `TEAM#${teamId}#PROJECT#${projectId}#IMPORTS`,
      sk: `IMPORT_AT#${createdAtIso}#${importId}`,
    }),
    /** Partition of a project's imports and their list entries. */
    importsPartition: (teamId: string, projectId: string) => `TEAM#${teamId}#PROJECT#${projectId}#IMPORTS`,
    /** Sparse GSI partition of imports still to finish. */
    runningImportsIndex: 'IMPORT_RUNNING',
  },
  sortKeyPrefix: { importListEntry: 'IMPORT_AT#' },
  entity: { importJob: 'import_job', importListEntry: 'import_list_entry' },
});
