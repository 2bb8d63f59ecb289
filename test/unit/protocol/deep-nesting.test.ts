/**
 * Deeply nested log lines and schemas are refused with typed errors before any recursive
 * decoder or walk can overflow the stack.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { InvalidArgumentError, InvalidTableError } from '../../../src/errors/index.js'
import { parseCommitFile } from '../../../src/protocol/action-json.js'
import { jsonDepthExceeded, MAX_JSON_DEPTH, parseJsonText } from '../../../src/protocol/json-text.js'
import {
  MAX_DDL_TYPE_DEPTH,
  parseDdlSchema,
  parseSchema,
  toStructType,
} from '../../../src/protocol/schema.js'

const COMMIT_INFO = '{"commitInfo":{"timestamp":1,"operation":"WRITE"}}'

function nestedArrays(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`
}

describe('JSON nesting limit of log lines', () => {
  it('refuses a commitInfo nested 100,000 levels with DELTA_INVALID_TABLE naming the file and line', () => {
    const deep = `{"commitInfo":{"operation":"WRITE","x":${nestedArrays(100_000)}}}`
    const path = '_delta_log/00000000000000000007.json'
    assert.throws(
      () => parseCommitFile(`${COMMIT_INFO}\n${deep}\n`, { path, version: 7n }),
      (err: unknown) => {
        assert.ok(err instanceof InvalidTableError)
        assert.equal(err.code, 'DELTA_INVALID_TABLE')
        assert.equal(err.reason, 'malformed-commit')
        assert.equal(err.path, path)
        assert.equal(err.version, 7n)
        assert.match(err.message, /00000000000000000007\.json line 2/)
        assert.match(err.message, new RegExp(`more than ${MAX_JSON_DEPTH} levels deep`))
        return true
      },
    )
  })

  it('accepts nesting up to the limit and counts no bracket inside a string', () => {
    const atLimit = `{"commitInfo":{"x":${nestedArrays(MAX_JSON_DEPTH - 2)}}}`
    const [action] = parseCommitFile(atLimit)
    assert.ok(action !== undefined && 'commitInfo' in action)
    const brackets = `{"commitInfo":{"operation":"${'[{\\"'.repeat(5000)}"}}`
    const [quoted] = parseCommitFile(brackets)
    assert.ok(quoted !== undefined && 'commitInfo' in quoted)
    assert.equal(quoted.commitInfo.operation, '[{"'.repeat(5000))
    assert.throws(
      () => parseCommitFile(`{"commitInfo":{"x":${nestedArrays(MAX_JSON_DEPTH - 1)}}}`),
      InvalidTableError,
    )
  })

  it('finds the first bracket too deep, also in text that is not JSON', () => {
    assert.equal(jsonDepthExceeded('[[[', 2), 2)
    assert.equal(jsonDepthExceeded('[[]][[]]', 2), -1)
    assert.equal(jsonDepthExceeded(`"\\"[[[" ${'{'.repeat(5)}`, 4), 12)
    assert.throws(() => parseJsonText(nestedArrays(MAX_JSON_DEPTH + 1)), SyntaxError)
    assert.deepEqual(parseJsonText('[[1]]'), [[1]])
  })

  it('refuses a deeply nested table schema in the log with DELTA_INVALID_TABLE', () => {
    let type = '"integer"'
    for (let i = 0; i < 2000; i++) type = `{"type":"array","elementType":${type},"containsNull":true}`
    const schema = `{"type":"struct","fields":[{"name":"a","type":${type},"nullable":true,"metadata":{}}]}`
    assert.throws(() => parseSchema(schema), InvalidTableError)
  })
})

describe('type nesting limit of schemas given by the caller', () => {
  it('refuses a 5,000-deep struct in DDL with DELTA_INVALID_ARGUMENT pointing at the level too deep', () => {
    const ddl = `a ${'struct<b: '.repeat(5000)}int${'>'.repeat(5000)}`
    assert.throws(
      () => parseDdlSchema(ddl),
      (err: unknown) => {
        assert.ok(err instanceof InvalidArgumentError)
        assert.equal(err.code, 'DELTA_INVALID_ARGUMENT')
        assert.equal(err.argument, 'schema')
        const position = 2 + 10 * MAX_DDL_TYPE_DEPTH
        assert.match(
          err.message,
          new RegExp(`position ${position}: types nest more than ${MAX_DDL_TYPE_DEPTH}`),
        )
        return true
      },
    )
  })

  it('accepts struct, array and map nesting up to the limit', () => {
    const half = MAX_DDL_TYPE_DEPTH / 2
    const ddl = `a ${'array<'.repeat(half)}${'map<string, '.repeat(half)}int${'>'.repeat(2 * half)}`
    const schema = parseDdlSchema(ddl)
    assert.equal(schema.fields.length, 1)
    assert.throws(() => parseDdlSchema(`a array<${ddl.slice(2)}>`), InvalidArgumentError)
  })

  it('refuses a deeply nested schema object with DELTA_INVALID_ARGUMENT', () => {
    let type: unknown = 'integer'
    for (let i = 0; i < 5000; i++) type = { type: 'array', elementType: type, containsNull: true }
    const schema = { type: 'struct', fields: [{ name: 'a', type, nullable: true, metadata: {} }] }
    assert.throws(() => toStructType(schema), InvalidArgumentError)
  })
})
