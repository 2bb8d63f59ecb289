/**
 * The `_last_checkpoint` hint is never trusted: a malformed or out-of-range hint is ignored and
 * the log listed, so the table opens at its true latest version with its true contents.
 */
import assert from 'node:assert/strict'
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { DeltaTable } from '../../../src/table/delta-table.js'

const LATEST = 5
const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

async function ids(table: DeltaTable, version?: bigint): Promise<bigint[]> {
  const rows = await table.scan(version === undefined ? {} : { version }).toArray()
  return rows.map((r) => r.id as bigint).sort((a, b) => (a < b ? -1 : 1))
}

const idsUpTo = (v: number) => Array.from({ length: v }, (_, i) => BigInt(i))

/** Bad hints, each as the `_last_checkpoint` content (a `null` makes it a directory). */
const BAD_HINTS: Array<[string, string | null]> = [
  ['a version wider than 20 digits', '{"version":99999999999999999999999,"size":3}'],
  ['the largest 20-digit version, far beyond the log', '{"version":99999999999999999999,"size":3}'],
  ['a version beyond the listed log', '{"version":1000,"size":3}'],
  ['a negative version', '{"version":-4,"size":3}'],
  ['a fractional version', '{"version":2.5,"size":3}'],
  ['a version in exponent form', '{"version":4e0,"size":3}'],
  ['a version as a string', '{"version":"4","size":3}'],
  ['a version without a checkpoint', '{"version":3,"size":3}'],
  ['an older checkpoint than the newest', '{"version":2,"size":3}'],
  ['an out-of-range part count', '{"version":4,"size":3,"parts":1e30}'],
  ['a negative size', '{"version":4,"size":-1}'],
  ['a truncated file', '{"version":4,"si'],
  ['an empty file', ''],
  ['a JSON array', '[4]'],
  ['binary junk', '\u0000\u00ff\ufffe{'],
  ['a directory in its place', null],
]

describe('a _last_checkpoint hint that cannot be trusted', () => {
  let template: string
  before(async () => {
    template = await mkdtemp(join(tmpdir(), 'delta-rlc-hint-'))
    roots.push(template)
    const table = await DeltaTable.create(template, {
      schema: 'id long',
      properties: { 'delta.checkpointInterval': '2' },
    })
    try {
      for (let v = 1; v <= LATEST; v++) await table.append([{ id: BigInt(v - 1) }])
    } finally {
      await table.close()
    }
  })

  for (const [name, content] of BAD_HINTS) {
    it(`is ignored: ${name}`, async () => {
      const root = await mkdtemp(join(tmpdir(), 'delta-rlc-hint-'))
      roots.push(root)
      await cp(template, root, { recursive: true })
      const hint = join(root, '_delta_log', '_last_checkpoint')
      await rm(hint, { force: true })
      if (content === null) await mkdir(hint)
      else await writeFile(hint, content)
      const table = await DeltaTable.open(root)
      try {
        const snap = await table.snapshot()
        assert.equal(snap.version, BigInt(LATEST))
        assert.deepEqual(await ids(table), idsUpTo(LATEST))
        for (const v of [1, 3, 4]) assert.deepEqual(await ids(table, BigInt(v)), idsUpTo(v))
        // The next commit lands after the true latest version.
        const result = await table.append([{ id: BigInt(LATEST) }])
        assert.equal(result.version, BigInt(LATEST + 1))
        assert.deepEqual(await ids(table), idsUpTo(LATEST + 1))
      } finally {
        await table.close()
      }
    })
  }
})
