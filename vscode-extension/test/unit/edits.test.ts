import assert from 'node:assert/strict';
import { editedUris } from '../../src/core/edits';

describe('edited documents of a workspace edit', () => {
  it('collects changes, text document edits, creates and rename targets once each', () => {
    assert.deepEqual(
      editedUris({
        changes: { 'file:///w/a.py': [] },
        documentChanges: [
          { kind: 'create', uri: 'file:///w/new.txt', options: { ignoreIfExists: true } },
          { textDocument: { uri: 'file:///w/new.txt', version: null }, edits: [] },
          { textDocument: { uri: 'file:///w/a.py', version: 3 }, edits: [] },
          { kind: 'rename', oldUri: 'file:///w/old.py', newUri: 'file:///w/moved.py' },
          { kind: 'delete', uri: 'file:///w/gone.py' },
          null,
        ],
      }),
      ['file:///w/a.py', 'file:///w/new.txt', 'file:///w/moved.py'],
    );
    assert.deepEqual(editedUris(undefined), []);
  });
});
