/**
 * The package as a user installs it: the packed tarball, and a `git+file://` clone of this
 * checkout (whose `prepare` script builds `dist/`), each installed into an empty project in a temp
 * directory with no dev dependencies. The project imports the API, creates a table, appends, scans
 * the rows back, and runs `npx delta-rlc --help`.
 *
 * The machine installs offline from the npm cache. npm resolves a new dependency through the
 * registry's package document, which the cache may hold in another form than the one asked for;
 * so each project gets a lockfile listing this package's production tree (taken from the
 * repository's own lockfile) with each package's tarball URL, and `npm ci --offline` installs the
 * tarballs from the cache by integrity. Online, a user runs plain `npm install <tarball or git
 * URL>` and npm writes the same tree.
 */
import assert from 'node:assert/strict'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it, type TestContext } from 'node:test'
import { buildCli, type CliRun, REPO_ROOT, startProcess } from '../helpers/cli-build.js'

type Run = CliRun

/** Runs a program in `dir` without colours or npm's update notice. */
function run(command: string, args: readonly string[], cwd: string): Promise<Run> {
  return startProcess(command, args, {
    cwd,
    env: { ...process.env, NO_COLOR: '1', npm_config_update_notifier: 'false' },
  }).done
}

function ok(r: Run, what: string): Run {
  assert.equal(r.code, 0, `${what} failed (exit ${r.code}):\n${r.stdout}\n${r.stderr}`)
  return r
}

interface LockEntry {
  readonly dev?: boolean
  readonly link?: boolean
  readonly version?: string
  readonly resolved?: string
  readonly [field: string]: unknown
}

/** The registry the repository's lockfile resolves against (npm's default). */
const REGISTRY = 'https://registry.npmjs.org'

/** The registry URL of a locked package's tarball, which the cache keys it by. */
function tarballUrl(path: string, entry: LockEntry): string | undefined {
  if (entry.resolved !== undefined || entry.link === true || entry.version === undefined)
    return entry.resolved
  const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)
  return `${REGISTRY}/${name}/-/${name.slice(name.lastIndexOf('/') + 1)}-${entry.version}.tgz`
}

/**
 * Writes an empty project that depends on delta-rlc through `spec`, with a lockfile holding this
 * package's production dependencies as the repository's lockfile resolves them.
 */
async function writeProject(dir: string, spec: string, resolved: string): Promise<void> {
  const pkg = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as Record<string, unknown>
  const lock = JSON.parse(await readFile(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>
  }
  const project = { name: 'install-check', version: '1.0.0', private: true, type: 'module' }
  const packages: Record<string, unknown> = {
    '': { ...project, dependencies: { 'delta-rlc': spec } },
    'node_modules/delta-rlc': {
      version: pkg.version,
      resolved,
      license: pkg.license,
      dependencies: pkg.dependencies,
      bin: pkg.bin,
      engines: pkg.engines,
      ...(resolved.startsWith('git+') ? { hasInstallScript: true } : {}),
    },
  }
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path !== '' && entry.dev !== true) packages[path] = { ...entry, resolved: tarballUrl(path, entry) }
  }
  await writeFile(
    join(dir, 'package.json'),
    JSON.stringify({ ...project, dependencies: { 'delta-rlc': spec } }, null, 2),
  )
  await writeFile(
    join(dir, 'package-lock.json'),
    JSON.stringify({ ...project, lockfileVersion: 3, requires: true, packages }, null, 2),
  )
  await writeFile(
    join(dir, 'check.mjs'),
    [
      "import { DeltaTable } from 'delta-rlc'",
      "const location = new URL('./events', import.meta.url).pathname",
      "const table = await DeltaTable.create(location, { schema: 'id long not null, name string' })",
      "await table.append([{ id: 1n, name: 'a' }, { id: 2n, name: 'b' }])",
      "await table.append([{ id: 3n, name: 'c' }])",
      'const rows = await table.scan().toArray()',
      'rows.sort((x, y) => Number(x.id - y.id))',
      'const version = (await table.snapshot()).version',
      'await table.close()',
      // Each subpath of the exports map resolves in the installed package.
      "const { createDefaultEngine } = await import('delta-rlc/engine')",
      "const { createAzureStore } = await import('delta-rlc/storage/azure')",
      "const { createS3Store } = await import('delta-rlc/storage/s3')",
      "const { createGcsStore } = await import('delta-rlc/storage/gcs')",
      "const { createSnapshotView } = await import('delta-rlc/duckdb')",
      "const { createFaultyStore } = await import('delta-rlc/testing')",
      'const subpaths = [createDefaultEngine, createAzureStore, createS3Store, createGcsStore, createSnapshotView, createFaultyStore].map((f) => f.name)',
      'console.log(JSON.stringify({ version: String(version), rows: rows.map((r) => [String(r.id), r.name]), subpaths }))',
    ].join('\n'),
  )
}

/** Installs the project offline; skips the test when the npm cache cannot serve a package. */
async function install(t: TestContext, dir: string): Promise<boolean> {
  const r = await run('npm', ['ci', '--offline', '--no-audit', '--no-fund'], dir)
  if (r.code !== 0 && /ENOTCACHED/.test(r.stderr)) {
    const what = /request to (\S+) failed/.exec(r.stderr)?.[1] ?? 'a dependency'
    // A git dependency's dev install reads the repository's lockfile, which names no tarball URLs:
    // npm then asks for package documents, and the cache may hold them only in another form.
    t.skip(`offline, and the npm cache cannot serve ${what} in the form npm asks for`)
    return false
  }
  ok(r, 'npm ci')
  return true
}

/** What the installed package must do in the project. */
async function checkProject(dir: string): Promise<void> {
  const out = ok(await run(process.execPath, ['check.mjs'], dir), 'the import check')
  assert.deepEqual(JSON.parse(out.stdout), {
    version: '2',
    rows: [
      ['1', 'a'],
      ['2', 'b'],
      ['3', 'c'],
    ],
    subpaths: [
      'createDefaultEngine',
      'createAzureStore',
      'createS3Store',
      'createGcsStore',
      'createSnapshotView',
      'createFaultyStore',
    ],
  })
  const help = ok(await run('npx', ['--offline', 'delta-rlc', '--help'], dir), 'npx delta-rlc --help')
  assert.match(help.stdout, /^usage: delta-rlc <command> <table> \[options\]/)
  assert.match(help.stdout, /\n {2}append +/)
  const scan = ok(
    await run('npx', ['--offline', 'delta-rlc', 'scan', 'events', '--format', 'csv'], dir),
    'npx delta-rlc scan',
  )
  assert.equal(scan.stdout, 'id,name\n1,a\n2,b\n3,c\n')
}

let dir: string
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'delta-rlc-install-'))
})
after(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('installing the package into an empty project', { concurrency: 2 }, () => {
  it('installs from the packed tarball: the API creates, appends and scans, and npx runs the CLI', async (t) => {
    await buildCli()
    const out = join(dir, 'pack')
    await mkdir(join(out, 'project'), { recursive: true })
    // dist/ is already built; packing without scripts keeps prepare from building it again.
    const packed = ok(
      await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', out], REPO_ROOT),
      'npm pack',
    )
    const [info] = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>
    assert.ok(info, 'npm pack printed no result')
    const paths = info.files.map((f) => f.path)
    assert.ok(paths.includes('dist/src/index.js') && paths.includes('dist/src/cli/main.js'), 'dist/ packed')
    assert.ok(!paths.some((p) => p.startsWith('src/') || p.startsWith('test/')), 'sources are not packed')
    const project = join(out, 'project')
    const spec = `file:../${info.filename}`
    await writeProject(project, spec, spec)
    if (!(await install(t, project))) return
    await checkProject(project)
  })

  it('installs from a git+file:// clone: prepare builds dist/, then the API and the CLI work', async (t) => {
    const out = join(dir, 'git')
    const clone = join(out, 'clone')
    await mkdir(join(out, 'project'), { recursive: true })
    // The committed state of this checkout, as a remote repository would serve it.
    ok(await run('git', ['clone', '--quiet', '--no-local', REPO_ROOT, clone], dir), 'git clone')
    const sha = ok(await run('git', ['rev-parse', 'HEAD'], clone), 'git rev-parse').stdout.trim()
    const spec = `git+file://${clone}`
    const project = join(out, 'project')
    await writeProject(project, spec, `${spec}#${sha}`)
    if (!(await install(t, project))) return
    const files = ok(await run('ls', ['node_modules/delta-rlc/dist/src/cli'], project), 'ls').stdout
    assert.match(files, /\bmain\.js\b/)
    await checkProject(project)
  })
})
