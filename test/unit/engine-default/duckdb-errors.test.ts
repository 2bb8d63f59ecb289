/**
 * The data plane's error mapping, on errors DuckDB and Node really raise: what a query computes
 * is the caller's (its predicate or its expressions), a file DuckDB cannot read is a storage
 * error, and an unexpected JavaScript error or DuckDB's own internal failure is a bug, never a
 * storage error.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api'
import {
  dataPlaneError,
  dataPlaneFailureKind,
  duckDbErrorType,
  streamFailureError,
} from '../../../src/engine-default/duckdb-errors.js'
import { InvalidArgumentError, isDeltaError, StorageError } from '../../../src/errors/index.js'
import { parsePredicate } from '../../../src/expressions/parse-predicate.js'

describe('DuckDB failures mapped to library errors', () => {
  let dir: string
  let instance: DuckDBInstance
  let con: DuckDBConnection

  /** The error DuckDB raises for `sql`. */
  async function duckError(sql: string): Promise<Error> {
    try {
      await con.run(sql)
    } catch (err) {
      assert.ok(err instanceof Error)
      return err
    }
    assert.fail(`DuckDB accepted ${sql}`)
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'delta-rlc-duckdb-errors-'))
    instance = await DuckDBInstance.create(':memory:', {
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'false',
    })
    con = await instance.connect()
  })
  after(async () => {
    con?.closeSync()
    instance?.closeSync()
    await rm(dir, { recursive: true, force: true })
  })

  const predicate = parsePredicate('amount > 1')
  const QUERY_CASES = [
    ['Parser', "SELECT 'unterminated"],
    ['Binder', 'SELECT lower(CAST(1 AS BIGINT))'],
    ['Conversion', "SELECT CAST('1e40' AS DECIMAL(10,2))"],
    ['Out of Range', 'SELECT CAST(9223372036854775807 AS BIGINT) * 2'],
    ['Invalid Input', "SELECT from_hex('zz')"],
  ] as const

  for (const [type, sql] of QUERY_CASES) {
    it(`a ${type} error evaluating the caller's predicate is DELTA_INVALID_PREDICATE`, async () => {
      const err = await duckError(sql)
      assert.equal(duckDbErrorType(err), type)
      assert.equal(dataPlaneFailureKind(err), 'query')
      const mapped = dataPlaneError(err, { what: 'scan', predicate })
      assert.ok(isDeltaError(mapped, 'DELTA_INVALID_PREDICATE'), String(mapped))
      assert.match(
        mapped.message,
        new RegExp(`^The predicate cannot be evaluated over the table: ${type} Error: `),
      )
      assert.equal((mapped as unknown as { text: string }).text, 'amount > 1')
      assert.ok(mapped.hint)
      assert.equal(mapped.cause, err)
    })

    it(`a ${type} error evaluating the caller's expressions is DELTA_INVALID_ARGUMENT`, async () => {
      const mapped = dataPlaneError(await duckError(sql), { what: 'MERGE', argument: 'merge' })
      assert.ok(mapped instanceof InvalidArgumentError, String(mapped))
      assert.equal(mapped.argument, 'merge')
      assert.match(mapped.message, new RegExp(`^Cannot evaluate the MERGE: ${type} Error: `))
    })
  }

  it("a parse or bind error in the library's own SQL is a bug, a value error a storage error", async () => {
    for (const sql of ["SELECT 'unterminated", 'SELECT lower(CAST(1 AS BIGINT))']) {
      const mapped = dataPlaneError(await duckError(sql), { what: 'write' })
      assert.ok(isDeltaError(mapped, 'DELTA_INTERNAL'), String(mapped))
    }
    const mapped = dataPlaneError(await duckError("SELECT CAST('x' AS INTEGER)"), { what: 'write' })
    assert.ok(isDeltaError(mapped, 'DELTA_STORAGE_ERROR'), String(mapped))
  })

  it('a missing or damaged data file is a storage error, even while a predicate is evaluated', async () => {
    const missing = await duckError(`SELECT * FROM read_parquet('${join(dir, 'missing.parquet')}')`)
    assert.equal(duckDbErrorType(missing), 'IO')
    const damagedPath = join(dir, 'damaged.parquet')
    await writeFile(damagedPath, 'this is not a parquet file, not at all')
    // DuckDB reports a damaged file as Invalid Input, the type of a value a function rejects.
    const damaged = await duckError(`SELECT * FROM read_parquet('${damagedPath}')`)
    assert.equal(duckDbErrorType(damaged), 'Invalid Input')
    for (const err of [missing, damaged]) {
      const mapped = dataPlaneError(err, { what: 'scan', predicate, paths: [damagedPath] })
      assert.ok(mapped instanceof StorageError, String(mapped))
      assert.match(mapped.hint ?? '', /Parquet/)
    }
  })

  it("Node's own file-system errors are storage errors", async () => {
    const err = await readFile(join(dir, 'nothing-here')).catch((e: unknown) => e)
    assert.equal(dataPlaneFailureKind(err), 'io')
    assert.ok(isDeltaError(dataPlaneError(err, { what: 'write' }), 'DELTA_STORAGE_ERROR'))
    // Node's limit on reading a file at once (a file over 2 GiB) is a file's failure too.
    const tooLarge = Object.assign(new RangeError('File size is greater than 2 GiB'), {
      code: 'ERR_FS_FILE_TOO_LARGE',
    })
    assert.ok(isDeltaError(dataPlaneError(tooLarge, { what: 'staging' }), 'DELTA_STORAGE_ERROR'))
  })

  it('a stack overflow or a TypeError is a bug (DELTA_INTERNAL), not a storage error', () => {
    const overflow = (() => {
      const deep = (n: number): number => deep(n + 1) + 1
      try {
        return deep(0)
      } catch (err) {
        return err
      }
    })()
    assert.ok(overflow instanceof RangeError)
    let typeError: unknown
    try {
      ;(undefined as unknown as { x: () => void }).x()
    } catch (err) {
      typeError = err
    }
    for (const err of [overflow, typeError, new Error('no DuckDB type prefix'), 'a thrown string']) {
      const mapped = dataPlaneError(err, { what: 'merge', predicate })
      assert.ok(isDeltaError(mapped, 'DELTA_INTERNAL'), String(mapped))
      assert.match(mapped.message, /This is a bug/)
    }
  })

  it("library errors, AbortErrors and the signal's own reason pass through unchanged", () => {
    const own = new StorageError('already mapped')
    assert.equal(dataPlaneError(own, { what: 'scan' }), own)
    const abort = new DOMException('stopped', 'AbortError')
    assert.equal(dataPlaneError(abort, { what: 'scan' }), abort)
    const controller = new AbortController()
    const reason = new Error('caller stopped it')
    controller.abort(reason)
    assert.equal(dataPlaneError(reason, { what: 'scan', signal: controller.signal }), reason)
  })

  it('a stream DuckDB ended part-way is mapped from the error its rerun raised', async () => {
    const cause = await duckError("SELECT CAST('x' AS INTEGER)")
    const mapped = streamFailureError(
      { rowsRead: 2048, detail: 'Conversion Error: ...', cause },
      { what: 'scan', predicate },
    )
    assert.ok(isDeltaError(mapped, 'DELTA_INVALID_PREDICATE'), String(mapped))
    assert.match(mapped.message, /\(DuckDB stopped the scan after 2048 rows\)$/)
    const unknown = streamFailureError(
      { rowsRead: 7, detail: 'ended on an error', cause: undefined },
      { what: 'scan' },
    )
    assert.ok(unknown instanceof StorageError)
    assert.match(unknown.message, /after 7 rows: ended on an error/)
  })
})
