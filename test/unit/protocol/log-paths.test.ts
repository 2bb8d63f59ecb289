import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { canonicalLogPath, tableRootOf } from '../../../src/protocol/log-paths.js'

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

  it('spells s3a:// and s3n:// as s3://, inside and outside the root', () => {
    for (const f of [
      's3a://bucket/t/p=1/f.parquet',
      'S3N://bucket/t/p%3D1/f.parquet',
      's3://bucket/t/p=1/f.parquet',
    ]) {
      assert.equal(canonicalLogPath(f, 's3://bucket/t'), 'p=1/f.parquet', f)
      assert.equal(canonicalLogPath(f, 's3a://bucket/t/'), 'p=1/f.parquet', f)
      assert.equal(canonicalLogPath(f), 's3://bucket/t/p=1/f.parquet', f)
    }
    assert.equal(canonicalLogPath('s3a://other/t/f.parquet', 's3://bucket/t'), 's3://other/t/f.parquet')
  })

  it('spells one Azure blob the same through abfss, abfs, wasbs, wasb and az', () => {
    const root = 'abfss://tables@acct.dfs.core.windows.net/sales'
    const forms = [
      'abfss://tables@acct.dfs.core.windows.net/sales/p=1/f.parquet',
      'abfs://tables@acct.dfs.core.windows.net/sales/p=1/f.parquet',
      'wasbs://tables@acct.blob.core.windows.net/sales/p=1/f.parquet',
      'WASB://tables@ACCT.blob.core.windows.net/sales/p%3D1/f.parquet',
      'az://tables/sales/p=1/f.parquet',
    ]
    for (const f of forms) {
      assert.equal(canonicalLogPath(f, root), 'p=1/f.parquet', f)
      assert.equal(
        canonicalLogPath(f, 'wasbs://tables@acct.blob.core.windows.net/sales/'),
        'p=1/f.parquet',
        f,
      )
    }
    for (const f of forms.slice(0, 4)) {
      assert.equal(canonicalLogPath(f), 'abfss://tables@acct.dfs.core.windows.net/sales/p=1/f.parquet', f)
    }
    // The container root, and a root that names no account (an az:// root).
    assert.equal(
      canonicalLogPath(forms[2] as string, 'abfss://tables@acct.dfs.core.windows.net'),
      'sales/p=1/f.parquet',
    )
    assert.equal(canonicalLogPath('az://tables/sales/f.parquet', 'az://tables/sales'), 'f.parquet')
  })

  it('keeps Azure blobs of another account, container or prefix outside the root', () => {
    const root = 'abfss://tables@acct.dfs.core.windows.net/sales'
    const outside = [
      'abfss://tables@other.dfs.core.windows.net/sales/f.parquet',
      'wasbs://logs@acct.blob.core.windows.net/sales/f.parquet',
      'abfss://tables@acct.dfs.core.windows.net/sales2/f.parquet',
      'az://tables/sales2/f.parquet',
      'az://logs/sales/f.parquet',
    ]
    for (const f of outside) assert.match(canonicalLogPath(f, root), /^(abfss|az):\/\//, f)
    // A root without an account cannot vouch for a path that names one.
    assert.match(canonicalLogPath(outside[0] as string, 'az://tables/sales'), /^abfss:/)
  })

  it('tableRootOf prefers the local directory, then rootUri, then root', () => {
    assert.equal(tableRootOf({ root: 'az://c/t' }), 'az://c/t')
    assert.equal(
      tableRootOf({ root: 'az://c/t', rootUri: 'abfss://c@a.dfs.core.windows.net/t' }),
      'abfss://c@a.dfs.core.windows.net/t',
    )
    assert.equal(tableRootOf({ root: '/x', localPath: (k) => `/data/t/${k}` }), '/data/t/')
  })

  it('returns a path with malformed escapes unchanged', () => {
    assert.equal(canonicalLogPath('a%zz/f.parquet'), 'a%zz/f.parquet')
  })
})
