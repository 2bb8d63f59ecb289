/**
 * How the CLI's input reader names a bad value: the file, the line or row, and the column,
 * whether DuckDB's own reader fails (it names the line) or the conversion to the table's type
 * does (found by a search), across several files, and for a file DuckDB cannot split into rows.
 * These run in-process on small files; the million-row cases are in cli-input-failures.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { openInputFiles } from '../../src/cli/input-file.js'
import { isDeltaError, parseDdlSchema } from '../../src/index.js'

const SCHEMA = parseDdlSchema('id long, amount double')

async function refusal(paths: string[], format: 'csv' | 'json'): Promise<string> {
  const input = await openInputFiles(paths, format)
  try {
    let message = ''
    await assert.rejects(input.checkRows(SCHEMA), (err: unknown) => {
      assert.ok(isDeltaError(err, 'DELTA_INVALID_ARGUMENT'), String(err))
      message = (err as Error).message
      return true
    })
    return message
  } finally {
    input.close()
  }
}

describe('input errors name where the bad value is', () => {
  let dir: string
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'delta-rlc-input-errors-'))
  })
  after(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('a value that does not convert to the table type: its row, line and column, found by search', async () => {
    // 'abc' is inside DuckDB's sample, so it reads the column as text; the cast to double fails.
    const file = join(dir, 'text.csv')
    await writeFile(file, 'id,amount\n1,2.5\n2,3.5\n3,abc\n4,1\n')
    assert.equal(
      await refusal([file], 'csv'),
      `The input cannot be read at file ${file}, line 4 (row 3), column 'amount': 'abc' is not a double`,
    )
  })

  it('among several JSON lines files, the file holding the bad value', async () => {
    const first = join(dir, 'a.jsonl')
    const second = join(dir, 'b.jsonl')
    await writeFile(first, '{"id":1,"amount":1.5}\n{"id":2,"amount":2.5}\n')
    await writeFile(second, '{"id":3,"amount":3.5}\n{"id":4,"amount":"four"}\n')
    const message = await refusal([first, second], 'json')
    assert.match(
      message,
      new RegExp(`^The input cannot be read at file ${second}, line 2 \\(row 2\\), column 'amount': `),
    )
  })

  it('a CSV row with too many fields: its line, and no column is blamed', async () => {
    const file = join(dir, 'ragged.csv')
    const lines = ['id,amount']
    for (let i = 1; i <= 30_000; i++) lines.push(`${i},${i}.5`)
    lines.push('30001,1.5,7')
    await writeFile(file, `${lines.join('\n')}\n`)
    assert.equal(
      await refusal([file], 'csv'),
      `The input cannot be read at file ${file}, line 30002 (row 30001): Expected Number of Columns: 2 Found: 3`,
    )
  })

  it('counts and checks a good input', async () => {
    const file = join(dir, 'good.csv')
    await writeFile(file, 'id,amount\n1,2.5\n2,3.5\n')
    const input = await openInputFiles([file], 'csv')
    try {
      assert.equal(await input.checkRows(SCHEMA), 2)
    } finally {
      input.close()
    }
  })
})
