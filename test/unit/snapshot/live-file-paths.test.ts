/**
 * Loading a snapshot checks every live file's path: a table opens exactly when `decodeAddPath`
 * accepts each path, whether the path is plain (checked in one scan) or not (checked in full).
 */
import assert from 'node:assert/strict'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { createDefaultEngine } from '../../../src/engine-default/default-engine.js'
import { serializeCommit } from '../../../src/protocol/action-json.js'
import type { Action } from '../../../src/protocol/actions.js'
import { decodeAddPath } from '../../../src/protocol/partition-values.js'
import { loadSnapshot } from '../../../src/snapshot/load-snapshot.js'
import { createLocalStore } from '../../../src/storage/local-store.js'
import { syntheticTableSetup } from '../../helpers/synthetic-table.js'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

const PATHS = [
  'plain.parquet',
  'part=1/f.parquet',
  'a/b/c/d.parquet',
  '.hidden/f.parquet',
  '..dots/f...parquet',
  'a..b/..c',
  'x y/f.parquet',
  'caf\u00e9/f.parquet',
  'enc%20oded.parquet',
  'bad%zzencoding.parquet',
  'enc%2F..%2Fout.parquet',
  '/abs/file.parquet',
  'file:///abs/file.parquet',
  's3://bucket/t/f.parquet',
  'c:/dir/f.parquet',
  'no:scheme/f.parquet',
  '',
  '/',
  'a//b.parquet',
  'a/',
  './a.parquet',
  'a/./b.parquet',
  'a/../b.parquet',
  '../out.parquet',
  '..',
  '.',
  'back\\slash.parquet',
  'nul\u0000.parquet',
]

function accepted(path: string): boolean {
  try {
    decodeAddPath(path)
    return true
  } catch {
    return false
  }
}

describe('live file paths at snapshot load', () => {
  it('open a table exactly when every path is one decodeAddPath accepts', async () => {
    const root = await mkdtemp(join(tmpdir(), 'delta-rlc-paths-'))
    roots.push(root)
    let opened = 0
    for (const [i, path] of PATHS.entries()) {
      const dir = join(root, `t${i}`)
      await mkdir(join(dir, '_delta_log'), { recursive: true })
      const actions: Action[] = [...syntheticTableSetup(1_700_000_000_000n)]
      actions.push({
        add: { path, partitionValues: {}, size: 10n, modificationTime: 1n, dataChange: true },
      })
      await writeFile(join(dir, '_delta_log', '00000000000000000000.json'), serializeCommit(actions))
      const engine = createDefaultEngine(createLocalStore(dir))
      try {
        const expected = accepted(path)
        if (expected) {
          const snap = await loadSnapshot(engine, dir)
          assert.equal(snap.activeFiles().length, 1, JSON.stringify(path))
          opened++
        } else {
          await assert.rejects(
            loadSnapshot(engine, dir),
            (err: { code?: string }) => err.code === 'DELTA_INVALID_TABLE',
            JSON.stringify(path),
          )
        }
      } finally {
        await engine.close()
      }
    }
    assert.ok(opened >= 10 && opened < PATHS.length, `opened ${opened} of ${PATHS.length}`)
  })
})
