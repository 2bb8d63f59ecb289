/**
 * The one form in which a table location is shown or stored (errors, CLI output, race files):
 * its query string, which for an `https://...?sv=...&sig=...` location is a SAS token, becomes
 * `?***` as in the Azure SDK's own messages, and a password in the URL's authority
 * (`https://user:password@host`) becomes `***`. The real location stays with whoever opened the
 * store; only this form leaves the process.
 */

/**
 * A location with its secrets replaced by `***`.
 *
 * @param location - a local path or a store URL
 * @returns a store URL without its query string's value or its authority's password; a local
 *   path or `file://` URL as it is
 */
export function redactLocation(location: string): string {
  // A local path (or file:// URL) may hold a '?' in a name; it carries no credential.
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(location) || /^file:/i.test(location)) return location
  const q = location.indexOf('?')
  const out = q < 0 ? location : `${location.slice(0, q)}?***`
  return out.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/@?#:]*:)[^/@?#]*@/i, '$1***@')
}
