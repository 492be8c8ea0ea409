import type { DamagedRunSummary } from '../../protocol/workbench-api.js';
import { RunRecordError } from '../../record/parse-run-record.js';
import { GuardedFileError } from '../files/file-read-error.js';
import { FileAccessError } from '../fs-errors.js';
import type { RunStoreEntry } from '../run-store.js';

/**
 * A file of the runs folder that is not a readable record, as History lists it. The reason is
 * kvscope's own words and the file's position or field path, never what the file holds: the
 * guarded reader's and the JSON reader's messages name no content, and a field's "got …" (the value
 * found) is dropped here. Only a regular file within the cap can be exported as it is; a link or an
 * oversized file can only be deleted (deleting a link leaves the file it points to alone).
 */
export function damagedRunSummary(entry: RunStoreEntry, error: unknown): DamagedRunSummary {
  const refusedUnread = error instanceof GuardedFileError || (error instanceof FileAccessError && !(error instanceof RunRecordError));
  return {
    damaged: true,
    id: entry.id,
    fileName: `${entry.id}.json`,
    bytes: entry.bytes,
    modifiedAt: new Date(entry.modifiedMs).toISOString(),
    reason: reasonOf(error),
    fix: fixOf(error),
    exportable: !refusedUnread,
  };
}

function reasonOf(error: unknown): string {
  if (error instanceof RunRecordError) return withoutFoundValue(error.message);
  if (error instanceof FileAccessError) return error.message;
  return 'it could not be read as a run record.';
}

/** `… steps[3].tokenId: expected an integer, got "x".` → `… steps[3].tokenId: expected an integer.` */
function withoutFoundValue(message: string): string {
  return message.replace(/, got [^]*$/, '.');
}

function fixOf(error: unknown): string {
  if (error instanceof GuardedFileError) {
    if (error.refusal === 'link') return 'Delete it: kvscope writes its records itself, so a link here is not one of them (the file it points to is left alone).';
    if (error.refusal === 'too-large') return 'Delete it, or move it out of the runs folder: no run record is that large.';
    return 'Delete it: kvscope writes its records as regular files.';
  }
  if (error instanceof RunRecordError && / is a version \d+ run record/.test(error.message)) {
    return 'Update kvscope to open it, or export the file to keep it and delete it here.';
  }
  if (error instanceof RunRecordError) return 'Export the raw file to mend it or to attach it to a report, then delete it here.';
  return 'Check the runs folder\'s permissions, or delete the file.';
}
