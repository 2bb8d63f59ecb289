/**
 * Makes s3rver honour conditional PUTs the way AWS S3 does; s3rver itself ignores `If-None-Match`
 * and `If-Match` and overwrites. Test code only.
 *
 * A conditional PUT first reserves its key synchronously (atomic inside the server's single
 * process), then checks the object: `If-None-Match: *` on an existing object answers 412
 * `PreconditionFailed`, and a second conditional PUT on a key whose first one is still in flight
 * answers 409 `ConditionalRequestConflict`, as S3 does.
 */

/** The part of a Koa context the guard uses. */
export interface GuardContext {
  readonly method: string
  readonly path: string
  readonly query: Readonly<Record<string, unknown>>
  get(header: string): string
  status: number
  type: string
  body: unknown
  readonly store: {
    existsObject(bucket: string, key: string): Promise<boolean>
    getObject(
      bucket: string,
      key: string,
    ): Promise<{ metadata: { etag?: string }; content?: { destroy?: () => void } } | null | undefined>
  }
}

/** A Koa middleware, as s3rver runs them. */
export type GuardMiddleware = (ctx: GuardContext, next: () => Promise<unknown>) => Promise<unknown>

/**
 * Creates the guard. Install it ahead of s3rver's router:
 * `server.middleware.unshift(createConditionalPutGuard())`. Path-style requests only.
 *
 * @returns the middleware
 */
export function createConditionalPutGuard(): GuardMiddleware {
  const inflight = new Set<string>()
  return async (ctx, next) => {
    const ifNoneMatch = ctx.get('if-none-match')
    const ifMatch = ctx.get('if-match')
    if (
      ctx.method !== 'PUT' ||
      (!ifNoneMatch && !ifMatch) ||
      ctx.query.uploadId !== undefined ||
      ctx.get('x-amz-copy-source')
    ) {
      return next()
    }
    const [, bucket = '', ...rest] = ctx.path.split('/')
    const key = decodeURIComponent(rest.join('/'))
    const reservation = `${bucket}/${key}`
    if (inflight.has(reservation)) {
      return xmlError(
        ctx,
        409,
        'ConditionalRequestConflict',
        'A conflicting conditional operation is in progress',
      )
    }
    inflight.add(reservation)
    try {
      const exists = await ctx.store.existsObject(bucket, key)
      if (ifNoneMatch === '*' && exists) {
        return xmlError(
          ctx,
          412,
          'PreconditionFailed',
          'At least one of the pre-conditions you specified did not hold',
        )
      }
      if (ifMatch) {
        const object = exists ? await ctx.store.getObject(bucket, key) : null
        object?.content?.destroy?.()
        if (!object || (ifMatch !== '*' && ifMatch !== object.metadata.etag)) {
          return exists
            ? xmlError(ctx, 412, 'PreconditionFailed', 'If-Match failed')
            : xmlError(ctx, 404, 'NoSuchKey', 'The specified key does not exist.')
        }
      }
      return await next()
    } finally {
      inflight.delete(reservation)
    }
  }
}

function xmlError(ctx: GuardContext, status: number, code: string, message: string): void {
  ctx.status = status
  ctx.type = 'application/xml'
  ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`
}
