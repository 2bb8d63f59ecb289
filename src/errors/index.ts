/**
 * The error taxonomy: every failure the library reports is a {@link DeltaError} subclass with a
 * stable `code`. Conflict errors mirror Delta's own exceptions.
 */
export * from './caller-errors.js'
export * from './change-data-errors.js'
export * from './clustering-errors.js'
export * from './column-mapping-errors.js'
export * from './commit-errors.js'
export * from './computed-column-errors.js'
export * from './conflict-errors.js'
export * from './constraint-errors.js'
export * from './delta-error.js'
export * from './is-delta-error.js'
export * from './redact-location.js'
export * from './row-tracking-errors.js'
export * from './storage-errors.js'
export * from './table-errors.js'
export * from './write-mode-errors.js'
