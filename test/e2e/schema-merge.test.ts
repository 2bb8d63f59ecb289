/**
 * Schema evolution on append (`schemaMode: 'merge'`, Spark's mergeSchema) through the public API,
 * `appendFile` and the CLI's `append --schema-mode merge`: new input columns join the schema
 * (nullable) in the same commit as the rows, missing columns are null, type mismatches are refused
 * and nothing is committed.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { tableFromArrays } from 'apache-arrow'
import { InvalidArgumentError, UnsupportedError } from '../../src/errors/index.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import { runCliInProcess } from '../helpers/cli-in-process.js'
import { commitCount, type LogLine, logLines } from './ops-support.js'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'delta-rlc-schema-merge-'))
  roots.push(d)
  return d
}

const fieldsOf = (lines: LogLine[]): [string, unknown, boolean][] =>
  JSON.parse(lines.find((l) => l.metaData)?.metaData.schemaString).fields.map((f: LogLine) => [
    f.name,
    f.type,
    f.nullable,
  ])

const byId = (rows: Record<string, unknown>[]) => rows.sort((a, b) => Number(a.id) - Number(b.id))

describe("append with schemaMode: 'merge'", () => {
  it('adds the new columns in the same commit as the rows; older rows and rows without them read null', async () => {
    const dir = join(await tempDir(), 't')
    const t = await DeltaTable.create(dir, { schema: 'id long not null, name string' })
    try {
      await t.append([{ id: 1n, name: 'a' }])
      const r = await t.append(
        [
          { id: 2n, name: 'b', score: 1.5, seen: true, n: 3n },
          { id: 3n, score: 2, n: 4 },
        ],
        { schemaMode: 'merge' },
      )
      const lines = await logLines(dir, r.version)
      assert.equal(lines.find((l) => l.commitInfo)?.commitInfo.operation, 'WRITE')
      assert.equal(lines.filter((l) => l.add).length, 1)
      assert.deepEqual(fieldsOf(lines), [
        ['id', 'long', false],
        ['name', 'string', true],
        ['score', 'double', true],
        ['seen', 'boolean', true],
        ['n', 'long', true],
      ])
      assert.deepEqual(byId(await t.scan().toArray()), [
        { id: 1n, name: 'a', score: null, seen: null, n: null },
        { id: 2n, name: 'b', score: 1.5, seen: true, n: 3n },
        { id: 3n, name: null, score: 2, seen: null, n: 4n },
      ])
      // Nothing new: no metaData action.
      const plain = await t.append([{ id: 4n, n: 5n }], { schemaMode: 'merge' })
      assert.equal(
        (await logLines(dir, plain.version)).some((l) => l.metaData),
        false,
      )
    } finally {
      await t.close()
    }
  })

  it('refuses type mismatches, columns of unknown type and other inputs, committing nothing', async () => {
    const dir = join(await tempDir(), 't')
    const t = await DeltaTable.create(dir, { schema: 'id long not null, name string' })
    try {
      const before = await commitCount(dir)
      await assert.rejects(
        t.append([{ id: 1n, name: 5 }], { schemaMode: 'merge' }),
        (e: unknown) => e instanceof InvalidArgumentError && /name/.test(e.message),
      )
      await assert.rejects(
        t.append(
          [
            { id: 1n, extra: 'x' },
            { id: 2n, extra: 3 },
          ],
          { schemaMode: 'merge' },
        ),
        (e: unknown) => e instanceof InvalidArgumentError && /different types/.test(e.message),
      )
      await assert.rejects(
        t.append([{ id: 1n, extra: null }], { schemaMode: 'merge' }),
        (e: unknown) => e instanceof InvalidArgumentError && /alter\.addColumns/.test(e.hint ?? ''),
      )
      await assert.rejects(t.append([{ id: 1n, s: { a: 1 } }], { schemaMode: 'merge' }), InvalidArgumentError)
      await assert.rejects(t.append([{ id: 1n, extra: 'x' }]), InvalidArgumentError)
      await assert.rejects(
        t.append(tableFromArrays({ id: BigInt64Array.from([1n]), u: BigUint64Array.from([1n]) }), {
          schemaMode: 'merge',
        }),
        UnsupportedError,
      )
      assert.equal(await commitCount(dir), before)
      assert.deepEqual(await t.scan().toArray(), [])
    } finally {
      await t.close()
    }
  })

  it('appendFile and the CLI append --schema-mode merge add the input columns the table lacks', async () => {
    const root = await tempDir()
    const dir = join(root, 't')
    const t = await DeltaTable.create(dir, { schema: 'id long not null, name string' })
    try {
      const csv = join(root, 'in.csv')
      await writeFile(csv, 'id,name,amount\n1,a,10\n2,b,20\n')
      const r = await t.appendFile([csv], { schemaMode: 'merge' })
      assert.deepEqual(fieldsOf(await logLines(dir, r.version)), [
        ['id', 'long', false],
        ['name', 'string', true],
        ['amount', 'long', true],
      ])
      const json = join(root, 'in.json')
      await writeFile(json, '{"id": 3, "city": "Oslo"}\n')
      const refused = await runCliInProcess(['append', dir, json])
      assert.notEqual(refused.code, 0)
      assert.match(refused.stderr, /city/)
      const usage = await runCliInProcess(['append', dir, json, '--schema-mode', 'replace'])
      assert.equal(usage.code, 1)
      assert.match(usage.stderr, /--schema-mode must be merge or overwrite/)
      const noOverwrite = await runCliInProcess(['append', dir, json, '--schema-mode', 'overwrite'])
      assert.equal(noOverwrite.code, 1)
      assert.match(noOverwrite.stderr, /--schema-mode overwrite needs --mode overwrite/)
      const ok = await runCliInProcess(['append', dir, json, '--schema-mode', 'merge'])
      assert.equal(ok.code, 0, ok.stderr)
      const t2 = await DeltaTable.open(dir)
      try {
        assert.deepEqual(
          (await t2.snapshot()).schema.fields.map((f) => [f.name, f.type]),
          [
            ['id', 'long'],
            ['name', 'string'],
            ['amount', 'long'],
            ['city', 'string'],
          ],
        )
        assert.deepEqual(byId(await t2.scan().toArray()), [
          { id: 1n, name: 'a', amount: 10n, city: null },
          { id: 2n, name: 'b', amount: 20n, city: null },
          { id: 3n, name: null, amount: null, city: 'Oslo' },
        ])
      } finally {
        await t2.close()
      }
    } finally {
      await t.close()
    }
  })
})
