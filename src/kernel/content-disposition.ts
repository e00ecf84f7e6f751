// A download's Content-Disposition (RFC 6266): `attachment` with the file name twice — `filename="…"`, a
// quoted string every client reads, and `filename*=UTF-8''…` (RFC 8187), which a current browser prefers.
// Whatever the name holds, the header stays one header: a quote, a backslash, a control character (CR, LF)
// or a non-ASCII character never reaches the quoted string, and the extended value is percent-encoded
// byte by byte (a lone surrogate is U+FFFD's bytes, as Buffer writes it).

/** RFC 8187 attr-char: what the extended value may carry as is. */
const ATTR_CHAR = /^[A-Za-z0-9!#$&+\-.^_`|~]$/;

export function attachmentDisposition(fileName: string): string {
  const quoted = fileName.replace(/[^\x20-\x7e]|["\\]/g, '_');
  let extended = '';
  for (const byte of Buffer.from(fileName, 'utf8')) {
    const char = String.fromCharCode(byte);
    extended += ATTR_CHAR.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return `attachment; filename="${quoted}"; filename*=UTF-8''${extended}`;
}
