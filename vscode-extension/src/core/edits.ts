/**
 * Which documents a `workspace/applyEdit` touched, so the extension can save
 * them: the agent's commands (tests, builds) read the disk, not the editor's
 * buffers. No `vscode` import.
 */

interface WorkspaceEditLike {
  changes?: Record<string, unknown>;
  documentChanges?: unknown[];
}

/** URIs of documents the edit changes or creates (renames: the new URI), in order, without duplicates. */
export function editedUris(edit: WorkspaceEditLike | null | undefined): string[] {
  const out: string[] = [];
  const add = (u: unknown): void => {
    if (typeof u === 'string' && !out.includes(u)) out.push(u);
  };
  for (const uri of Object.keys(edit?.changes ?? {})) add(uri);
  for (const c of edit?.documentChanges ?? []) {
    if (!c || typeof c !== 'object') continue;
    const change = c as { kind?: string; uri?: string; newUri?: string; textDocument?: { uri?: string } };
    if (change.textDocument) add(change.textDocument.uri);
    else if (change.kind === 'create') add(change.uri);
    else if (change.kind === 'rename') add(change.newUri);
  }
  return out;
}
