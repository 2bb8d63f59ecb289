import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { canonicalLogPath } from '../../../src/protocol/log-paths.js'

describe('canonicalLogPath', () => {
  const root = '/data/t'
  it('spells every local form of one absolute file the same', () => {
    const forms = [
      '/a/b/part-0.parquet',
      'file:/a/b/part-0.parquet',
      'file:///a/b/part-0.parquet',
      'file://localhost/a/b/part-0.parquet',
      'FILE:///a/b/part-0.parquet',
      'file:///a/%62/part-0.parquet',
    ]
    for (const f of forms) assert.equal(canonicalLogPath(f), 'file:///a/b/part-0.parquet', f)
    for (const f of forms) assert.equal(canonicalLogPath(f, root), 'file:///a/b/part-0.parquet', f)
  })

  it('makes an absolute path inside the table root relative, in every form', () => {
    for (const f of [
      '/data/t/p=1/part-0.parquet',
      'file:/data/t/p=1/part-0.parquet',
      'file:///data/t/p=1/part-0.parquet',
      'file://localhost/data/t/p=1/part-0.parquet',
      'file:///data/t/p%3D1/part-0.parquet',
    ]) {
      assert.equal(canonicalLogPath(f, root), 'p=1/part-0.parquet', f)
      assert.equal(canonicalLogPath(f, 'file:///data/t/'), 'p=1/part-0.parquet', f)
    }
    assert.equal(canonicalLogPath('p=1/part-0.parquet', root), 'p=1/part-0.parquet')
    // A sibling directory sharing the root's name as a prefix is outside the table.
    assert.equal(canonicalLogPath('/data/t2/part-0.parquet', root), 'file:///data/t2/part-0.parquet')
  })

  it('decodes exactly once: escapes of safe characters and escape case do not matter, %25 does', () => {
    assert.equal(canonicalLogPath('a%3Ab/part.parquet'), 'a:b/part.parquet')
    assert.equal(
      canonicalLogPath('d=2021-09-08%2011%3a11/f.parquet'),
      canonicalLogPath('d=2021-09-08%2011:11/f.parquet'),
    )
    assert.equal(canonicalLogPath('x%20y/f.parquet'), 'x%20y/f.parquet')
    assert.equal(canonicalLogPath('x%2520y/f.parquet'), 'x%2520y/f.parquet')
    assert.notEqual(canonicalLogPath('x%2520y/f.parquet'), canonicalLogPath('x%20y/f.parquet'))
    assert.equal(canonicalLogPath('/data/t/x%2520y/f.parquet', root), 'x%2520y/f.parquet')
    assert.equal(canonicalLogPath('é/f.parquet'), canonicalLogPath('%C3%A9/f.parquet'))
  })

  it('keeps remote URIs apart from local ones, with the scheme in lowercase', () => {
    assert.equal(canonicalLogPath('S3://bucket/t/f.parquet'), 's3://bucket/t/f.parquet')
    assert.equal(canonicalLogPath('s3://bucket/t/f.parquet', 's3://bucket/t'), 'f.parquet')
    assert.equal(canonicalLogPath('file://host/t/f.parquet', root), 'file://host/t/f.parquet')
  })

  it('returns a path with malformed escapes unchanged', () => {
    assert.equal(canonicalLogPath('a%zz/f.parquet'), 'a%zz/f.parquet')
  })
})
