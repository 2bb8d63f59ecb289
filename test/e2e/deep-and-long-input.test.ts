/**
 * Input at the sizes that once overflowed the stack, through the public API on real tables: long
 * AND / OR chains work end to end (parse, pruning, DuckDB, the commit's recorded predicate), and
 * deep nesting in a predicate, a schema or a log line is refused with a typed error that leaves
 * the table as it was.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { InvalidArgumentError, InvalidPredicateError, InvalidTableError } from '../../src/errors/index.js'
import { DeltaTable } from '../../src/table/delta-table.js'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'delta-rlc-deep-'))
  roots.push(d)
  return join(d, 't')
}

const ROWS = 2000

async function tableWithRows(dir: string, conflicts?: 'all'): Promise<DeltaTable> {
  const table = await DeltaTable.create(
    dir,
    { schema: 'id long not null, name string', properties: { 'delta.enableDeletionVectors': 'true' } },
    { conflicts },
  )
  const rows: Array<{ id: bigint; name: string }> = []
  for (let i = 0; i < ROWS; i++) rows.push({ id: BigInt(i), name: `n${i}` })
  await table.append(rows)
  return table
}

async function ids(table: DeltaTable, where?: string): Promise<number[]> {
  const rows = await table.scan({ where, columns: ['id'] }).toArray()
  return rows.map((r) => Number(r.id as bigint)).sort((a, b) => a - b)
}

function chain(op: 'OR' | 'AND', n: number, term: (i: number) => string): string {
  const parts: string[] = []
  for (let i = 0; i < n; i++) parts.push(term(i))
  return parts.join(` ${op} `)
}

async function commitCount(dir: string): Promise<number> {
  return (await readdir(join(dir, '_delta_log'))).filter((f) => f.endsWith('.json')).length
}

describe('long AND / OR chains on a real table', () => {
  it('scan and DELETE with an OR of 100,000 equality terms select exactly the matching rows', async () => {
    const dir = await tempDir()
    const table = await tableWithRows(dir)
    try {
      // Multiples of 7 up to 699,993: the table holds those below ROWS.
      const where = chain('OR', 100_000, (i) => `id = ${i * 7}`)
      const expected: number[] = []
      const kept: number[] = []
      for (let i = 0; i < ROWS; i++) (i % 7 === 0 ? expected : kept).push(i)
      assert.deepEqual(await ids(table, where), expected)

      const result = await table.delete(where)
      assert.equal(result.metrics.numDeletedRows, expected.length)
      assert.deepEqual(await ids(table), kept)
      const [entry] = await table.history({ limit: 1 })
      assert.equal(entry?.commitInfo?.operationParameters?.predicate, JSON.stringify([where]))
    } finally {
      await table.close()
    }
  })

  it('a transaction reading with an AND of 100,000 terms gets exactly its rows, and its read predicate clears a concurrent append', async () => {
    const dir = await tempDir()
    // Conflict-time data skipping evaluates the read predicate over the winner's statistics;
    // without it (file-level Delta) any concurrent append conflicts with a Serializable read.
    const table = await tableWithRows(dir, 'all')
    try {
      // Excludes every even id below 200,000: the odd ids are read.
      const where = chain('AND', 100_000, (i) => `id <> ${2 * i}`)
      const odd: number[] = []
      for (let i = 1; i < ROWS; i += 2) odd.push(i)
      const txn = await table.begin({ isolationLevel: 'Serializable' })
      const read = await txn.scan({ where, columns: ['id'] }).toArray()
      assert.deepEqual(
        read.map((r) => Number(r.id as bigint)).sort((a, b) => a - b),
        odd,
      )
      await txn.append([{ id: 150_000n, name: 'mine' }])
      // Id 4 is excluded by the read predicate, so the read did not miss it.
      await table.append([{ id: 4n, name: 'concurrent' }])
      const result = await txn.commit()
      assert.equal(result.version, 3n)
      assert.equal(await table.scan({ where: "name IN ('mine', 'concurrent')" }).count(), 2)
    } finally {
      await table.close()
    }
  })
})

describe('deep nesting is refused and the table stays as it was', () => {
  it('a predicate in 10,000 parentheses gives DELTA_INVALID_PREDICATE for delete and scan', async () => {
    const dir = await tempDir()
    const table = await tableWithRows(dir)
    try {
      const deep = `${'('.repeat(10_000)}id = 1${')'.repeat(10_000)}`
      await assert.rejects(() => table.delete(deep), InvalidPredicateError)
      await assert.rejects(() => table.scan({ where: deep }).toArray(), InvalidPredicateError)
      assert.equal(await commitCount(dir), 2)
      assert.equal((await ids(table)).length, ROWS)
    } finally {
      await table.close()
    }
  })

  it('a DDL schema with a 5,000-deep struct gives DELTA_INVALID_ARGUMENT and creates nothing', async () => {
    const dir = await tempDir()
    const ddl = `id long, s ${'struct<b: '.repeat(5000)}int${'>'.repeat(5000)}`
    await assert.rejects(
      () => DeltaTable.create(dir, { schema: ddl }),
      (err: unknown) => err instanceof InvalidArgumentError && err.argument === 'schema',
    )
    await assert.rejects(() => readdir(join(dir, '_delta_log')), { code: 'ENOENT' })
  })

  it('a commit whose commitInfo nests 100,000 levels gives DELTA_INVALID_TABLE on open, history and append', async () => {
    const dir = await tempDir()
    const table = await tableWithRows(dir)
    try {
      // A hostile or broken writer's version 2: a valid first line, then the deep one.
      const deep = `{"commitInfo":{"operation":"WRITE","x":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`
      const key = join(dir, '_delta_log', '00000000000000000002.json')
      await writeFile(key, `{"commitInfo":{"operation":"WRITE"}}\n${deep}\n`, { flag: 'wx' })
      const isDeepLine = (err: unknown): boolean => {
        assert.ok(err instanceof InvalidTableError, String(err))
        assert.equal(err.code, 'DELTA_INVALID_TABLE')
        assert.equal(err.version, 2n)
        assert.match(err.message, /00000000000000000002\.json line 2 /)
        assert.match(err.message, /more than 1000 levels deep/)
        return true
      }
      await assert.rejects(() => DeltaTable.open(dir), isDeepLine)
      await assert.rejects(() => table.history(), isDeepLine)
      await assert.rejects(() => table.append([{ id: 9999n, name: 'x' }]), isDeepLine)
      assert.equal(await commitCount(dir), 3)
      // Versions before it still read.
      assert.equal((await table.scan({ version: 1n }).toArray()).length, ROWS)
    } finally {
      await table.close()
    }
  })
})
