/**
 * Strings with a lone UTF-16 surrogate cannot be stored as UTF-8: DuckDB would silently replace
 * the surrogate with U+FFFD. Every path by which strings enter the data plane (append values,
 * nested struct, list and map strings, map keys, partition values, MERGE sources) refuses them
 * with DELTA_INVALID_ARGUMENT naming the row (its index in the request) and column, and commits
 * nothing; a valid surrogate pair is stored exactly.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { DeltaTable, isDeltaError } from '../../../src/index.js'

const SCHEMA = 'id long, s string, st struct<a: string>, xs array<string>, m map<string, string>, p string'

function row(id: number, over: Record<string, unknown> = {}): Record<string, unknown> {
  return { id: BigInt(id), s: 'x', st: { a: 'y' }, xs: ['z'], m: new Map([['k', 'v']]), p: 'part', ...over }
}

describe('lone UTF-16 surrogates', () => {
  let dir: string
  let table: DeltaTable
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'delta-rlc-surrogates-'))
    table = await DeltaTable.create(join(dir, 't'), { schema: SCHEMA, partitionBy: ['p'] })
    await table.append([row(1, { s: 'emoji \u{1F600} pair' })])
  })
  after(async () => {
    await table.close()
    await rm(dir, { recursive: true, force: true })
  })

  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    [
      'a top-level string',
      { s: 'bad \uD800 here' },
      /Row 1, column 's': .*lone UTF-16 surrogate \(U\+D800\) at index 4/,
    ],
    ['a struct field', { st: { a: '\uDC00' } }, /Row 1, column 'st\.a': .*\(U\+DC00\) at index 0/],
    ['a list element', { xs: ['ok', 'tail \uD83D'] }, /Row 1, column 'xs\[1\]': .*\(U\+D83D\) at index 5/],
    ['a map value', { m: new Map([['k', '\uDFFF']]) }, /Row 1, column 'm\["k"\]': .*\(U\+DFFF\)/],
    ['a map key', { m: new Map([['\uD800', 'v']]) }, /Row 1, column 'm\.key': .*\(U\+D800\)/],
    ['a partition value', { p: 'p\uD800' }, /Row 1, column 'p': .*\(U\+D800\)/],
  ]
  for (const [where, over, message] of cases) {
    it(`refuses one in ${where} and commits nothing`, async () => {
      const before = (await table.snapshot()).version
      await assert.rejects(table.append([row(1), row(2, over)]), (err: unknown) => {
        assert.ok(isDeltaError(err, 'DELTA_INVALID_ARGUMENT'), String(err))
        assert.match((err as Error).message, message)
        return true
      })
      assert.equal((await table.snapshot()).version, before)
    })
  }

  it('refuses one in a MERGE source row', async () => {
    const before = (await table.snapshot()).version
    await assert.rejects(
      table.merge([row(1), row(7, { s: 'x\uDBFFy' })], {
        on: 'target.id = source.id',
        whenMatched: [{ update: '*' }],
        whenNotMatched: [{ insert: '*' }],
      }),
      (err: unknown) => {
        assert.ok(isDeltaError(err, 'DELTA_INVALID_ARGUMENT'), String(err))
        assert.match((err as Error).message, /column 's': .*\(U\+DBFF\) at index 1/)
        return true
      },
    )
    assert.equal((await table.snapshot()).version, before)
  })

  it('refuses one in a predicate literal, so a DELETE cannot match a stored U+FFFD', async () => {
    await table.append([row(2, { s: '\uFFFD' })])
    const before = (await table.snapshot()).version
    for (const where of ["s = '\uD800'", "s = 'a' OR s = '\uDC00'"]) {
      await assert.rejects(table.delete(where), (err: unknown) => {
        assert.ok(isDeltaError(err, 'DELTA_INVALID_PREDICATE'), String(err))
        assert.match((err as Error).message, /lone UTF-16 surrogate \(U\+D[C8]00\)/)
        return true
      })
    }
    const literal = { kind: 'literal', type: 'string', value: '\uD800' }
    const tree = { kind: 'comparison', op: '=', left: { kind: 'column', path: ['s'] }, right: literal }
    await assert.rejects(table.delete(tree as never), (err: unknown) =>
      isDeltaError(err, 'DELTA_INVALID_ARGUMENT'),
    )
    assert.equal((await table.snapshot()).version, before)
    assert.equal(await table.scan({ where: "s = '\uFFFD'" }).count(), 1)
    await table.delete('id = 2')
  })

  it('stores a valid surrogate pair exactly, and nothing else was written', async () => {
    const rows = await table.scan({ columns: ['id', 's'] }).toArray()
    assert.deepEqual(rows, [{ id: 1n, s: 'emoji \u{1F600} pair' }])
  })
})
