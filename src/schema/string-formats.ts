// The string `format` values OpenAI's strict mode accepts, each as a test of a
// string. The tests follow the RFCs JSON Schema names for each format (RFC 3339
// for date-time, date, time and duration's ISO 8601 form; RFC 5321's dot-atom
// for email; RFC 1123 for hostname; RFC 4122 for uuid), and stay regular
// expressions without nested quantifiers, so a long string costs linear time.

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME = /^([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$/;
const DURATION = /^P(?!$)(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+S)?)?$/;
const EMAIL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
const HOSTNAME = /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const UUID = /^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/;
const HEX_GROUP = /^[0-9A-Fa-f]{1,4}$/;

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isDate(text: string): boolean {
  const match = DATE.exec(text);
  if (match === null) return false;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  if (month < 1 || month > 12 || day < 1) return false;
  if (month === 2 && day === 29) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (DAYS_IN_MONTH[month - 1] as number);
}

function isDateTime(text: string): boolean {
  const t = text.length > 10 ? text.charCodeAt(10) : 0;
  // RFC 3339 section 5.6 allows a lowercase `t` separator.
  if (t !== 0x54 && t !== 0x74) return false;
  return isDate(text.slice(0, 10)) && TIME.test(text.slice(11));
}

function isHostname(text: string): boolean {
  return text.length <= 253 && HOSTNAME.test(text);
}

function isEmail(text: string): boolean {
  const at = text.lastIndexOf('@');
  return at > 0 && at <= 64 && text.length - at - 1 <= 253 && EMAIL.test(text);
}

function isIpv6(text: string): boolean {
  if (text.length > 45) return false;
  let head = text;
  const lastColon = text.lastIndexOf(':');
  // An embedded IPv4 tail (::ffff:192.0.2.1) stands for the last two groups.
  if (lastColon !== -1 && text.indexOf('.', lastColon) !== -1) {
    if (!IPV4.test(text.slice(lastColon + 1))) return false;
    head = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const halves = head.split('::');
  if (halves.length > 2) return false;
  const groups = (part: string): number => {
    if (part === '') return 0;
    const list = part.split(':');
    for (const group of list) if (!HEX_GROUP.test(group)) return -1;
    return list.length;
  };
  if (halves.length === 1) return groups(head) === 8;
  const left = groups(halves[0] as string);
  const right = groups(halves[1] as string);
  return left >= 0 && right >= 0 && left + right < 8;
}

// No prototype: a `format` of "constructor" or "toString" must not find a function.
export const STRING_FORMATS: Readonly<Record<string, (text: string) => boolean>> = Object.freeze(Object.assign(Object.create(null) as Record<string, (text: string) => boolean>, {
  'date-time': isDateTime,
  date: isDate,
  time: (text: string) => TIME.test(text),
  duration: (text: string) => DURATION.test(text),
  email: isEmail,
  hostname: isHostname,
  ipv4: (text: string) => IPV4.test(text),
  ipv6: isIpv6,
  uuid: (text: string) => UUID.test(text),
}));

export const STRING_FORMAT_NAMES: readonly string[] = Object.keys(STRING_FORMATS);
