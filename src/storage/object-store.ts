/**
 * Byte storage under one root: a local directory, a memory map, a container prefix or a bucket
 * prefix. Knows nothing about Delta.
 *
 * Keys are relative to the root, use `/` as separator, never start with `/` and never contain
 * `.` or `..` segments.
 *
 * The correctness of commits rests on three guarantees every backend must give:
 * 1. atomic visibility: a reader sees either nothing or the whole object of a completed put;
 * 2. mutual exclusion: of concurrent `ifNotExists` puts on one key, exactly one succeeds and
 *    every other one throws {@link FileAlreadyExistsError};
 * 3. listing reflects every completed put.
 *
 * A backend that cannot guarantee (2) must throw {@link UnsupportedError} from a put with
 * `ifNotExists` instead of risking a lost commit.
 */
export interface ObjectStore {
  /** Human-readable root, used in messages (never contains secrets). */
  readonly root: string

  /**
   * The root as a URI that also names what `root` leaves to the settings, such as the storage
   * account of an `az://<container>/<prefix>` root (`abfss://<container>@<account>.dfs.<suffix>/<prefix>`).
   * Absolute data file paths in a table's log are matched against it, so that a path spelled with
   * the account lies inside the table. Absent: `root` is that URI.
   */
  readonly rootUri?: string

  /**
   * Reads an object, or a byte range of it.
   *
   * @param key - object key
   * @param range - `{ offset, length }`; reading past the end returns the bytes up to the end
   * @throws {FileNotFoundError} if the object does not exist
   * @throws {StorageError} on any other backend failure
   */
  read(key: string, range?: ByteRange, opts?: StoreCallOptions): Promise<Uint8Array>

  /**
   * Lists the objects directly inside the directory of `from` (not recursive) whose key sorts at
   * or after `from`, in ascending UTF-8 byte order of their keys.
   *
   * @param from - a key; its directory part is the directory listed (`'_delta_log/0000'` lists
   *   `_delta_log/` from `0000` on; `'_delta_log/'` lists the whole directory)
   * @returns an empty iteration when the directory does not exist
   */
  listFrom(from: string, opts?: StoreCallOptions): AsyncIterable<FileMeta>

  /**
   * Set when {@link listFrom} costs a read of the whole directory whatever `from` is (a local
   * directory, a container listing without a start option): a caller that knows which names to
   * expect next heads them one by one instead of listing.
   */
  readonly listingReadsWholeDirectory?: boolean

  /**
   * Lists the objects directly inside the directory of `prefix` (not recursive) whose key starts
   * with `prefix`, in ascending UTF-8 byte order of their keys. Only a backend whose service
   * selects the names by prefix has it: the listing then costs the matching names, one request
   * per page, however many other names the directory holds. Where {@link listFrom} reads the
   * whole directory, this is the bounded listing a caller that knows which block of names it
   * wants makes instead.
   *
   * @param prefix - a key or the start of one; its directory part is the directory listed
   *   (`'_delta_log/000000000000000001'` lists the names of `_delta_log/` that start with
   *   `000000000000000001`; `'_delta_log/'` lists the whole directory)
   * @returns an empty iteration when nothing matches or the directory does not exist
   */
  listPrefix?(prefix: string, opts?: StoreCallOptions): AsyncIterable<FileMeta>

  /**
   * Lists every object under `prefix` (a directory key ending in `/`, or `''` for the root),
   * recursively, in no particular order.
   */
  listRecursive(prefix: string, opts?: StoreCallOptions): AsyncIterable<FileMeta>

  /**
   * Writes an object. Without `ifNotExists` an existing object is replaced atomically.
   *
   * @returns the new object's metadata exactly as {@link head} would give it, when the backend
   *   learns it from the write itself (a caller then spares a `head`); nothing otherwise
   * @throws {FileAlreadyExistsError} with `ifNotExists` when the object exists; it is then left
   *   untouched
   * @throws {StorageError} on backend failure; `ambiguous` is set when the put may have landed
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a store written before puts reported metadata returns Promise<void>, and stays a valid store
  put(key: string, data: Uint8Array, opts?: PutOptions): Promise<FileMeta | undefined | void>

  /**
   * Metadata of one object.
   *
   * @throws {FileNotFoundError} if the object does not exist
   */
  head(key: string, opts?: StoreCallOptions): Promise<FileMeta>

  /** Deletes an object. Idempotent: deleting a missing object succeeds. */
  delete(key: string, opts?: StoreCallOptions): Promise<void>

  /**
   * The absolute local file-system path of a key, when this store is a local directory; the data
   * plane reads such files in place instead of staging a copy.
   */
  localPath?(key: string): string

  /**
   * The backend's own temporary files that a put abandoned (its process was killed part way), for
   * VACUUM to remove once they are old. Only backends that write such files have this; `delete`
   * accepts the keys it yields.
   */
  listTemporaryFiles?(opts?: StoreCallOptions): AsyncIterable<FileMeta>
}

/** One stored object. */
export interface FileMeta {
  /** Key relative to the store root. */
  readonly key: string
  /** Size in bytes. */
  readonly size: number
  /** Last modification, milliseconds since the epoch. */
  readonly lastModified: number
}

/** A byte range: `length` bytes starting at `offset`. */
export interface ByteRange {
  readonly offset: number
  readonly length: number
}

/** Options every store call takes. */
export interface StoreCallOptions {
  readonly signal?: AbortSignal | undefined
}

/** Options of {@link ObjectStore.put}. */
export interface PutOptions extends StoreCallOptions {
  /** Fail with FileAlreadyExistsError instead of replacing an existing object. */
  readonly ifNotExists?: boolean | undefined
}
