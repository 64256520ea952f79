/**
 * The alert handlers' job properties: ElasticJob 3.0.5's names, defaults and required ones, read in its
 * `ecosystem/error-handler` modules (EmailPropertiesConstants.java, WechatPropertiesConstants.java,
 * DingtalkPropertiesConstants.java and their *JobErrorHandlerPropertiesValidator.java), plus this library's WEBHOOK
 * and the throttle window every alert handler shares. Pure: no I/O.
 */

/** The error handlers that send an alert; EMAIL, WECHAT and DINGTALK are ElasticJob's, WEBHOOK this library's. */
export const ALERT_HANDLER_TYPES = ['EMAIL', 'WECHAT', 'DINGTALK', 'WEBHOOK'] as const;
export type AlertHandlerType = (typeof ALERT_HANDLER_TYPES)[number];

export function isAlertHandlerType(type: unknown): type is AlertHandlerType {
  return (ALERT_HANDLER_TYPES as readonly unknown[]).includes(type);
}

/** ElasticJob's defaults, as its *PropertiesConstants.java spell them. */
export const ALERT_DEFAULTS = {
  connectTimeoutMilliseconds: 3000,
  readTimeoutMilliseconds: 5000,
  emailSubject: 'ElasticJob error message',
  emailUseSsl: true,
  /** This library's: at most one alert per job and kind of error in this many seconds. */
  throttleSeconds: 300,
} as const;

/** The window of the alert throttle, a job property (Java ignores properties it does not read). */
export const THROTTLE_PROP = 'alert.throttleSeconds';

/** Each handler's required properties (ElasticJob's checkRequired), its URL ones and its positive integers. */
const RULES: Record<AlertHandlerType, { required: string[]; urls: string[]; positive: string[]; booleans: string[] }> =
  {
    EMAIL: {
      required: ['email.host', 'email.port', 'email.username', 'email.password', 'email.from', 'email.to'],
      urls: [],
      positive: ['email.port'],
      booleans: ['email.useSsl', 'email.debug'],
    },
    WECHAT: {
      required: ['wechat.webhook'],
      urls: ['wechat.webhook'],
      positive: ['wechat.connectTimeoutMilliseconds', 'wechat.readTimeoutMilliseconds'],
      booleans: [],
    },
    DINGTALK: {
      required: ['dingtalk.webhook'],
      urls: ['dingtalk.webhook'],
      positive: ['dingtalk.connectTimeoutMilliseconds', 'dingtalk.readTimeoutMilliseconds'],
      booleans: [],
    },
    WEBHOOK: {
      required: ['webhook.url'],
      urls: ['webhook.url'],
      positive: ['webhook.connectTimeoutMilliseconds', 'webhook.readTimeoutMilliseconds'],
      booleans: [],
    },
  };

/** Values never shown (logs, errors, the operator API, the CLI, the console): masked whole. */
const SECRET_PROPS: ReadonlySet<string> = new Set(['email.password', 'dingtalk.secret']);
/** URLs whose path or query carries a token (a robot's access_token, WeCom's key): shown as their origin only. */
const SECRET_URL_PROPS: ReadonlySet<string> = new Set(['wechat.webhook', 'dingtalk.webhook', 'webhook.url']);
export const MASK = '******';

/** What is wrong with an alert handler's properties: the property and why, or undefined when they will do. */
export function alertPropsProblem(
  type: AlertHandlerType,
  props: Readonly<Record<string, string>>,
): { prop: string; detail: string } | undefined {
  const rules = RULES[type];
  for (const prop of rules.required)
    // ElasticJob's PropertiesPreconditions.checkRequired: "The property `%s` is required."
    if (props[prop] === undefined || props[prop].trim() === '')
      return { prop, detail: `is required by the ${type} error handler` };
  for (const prop of rules.positive) {
    const value = props[prop];
    // PropertiesPreconditions.checkPositiveInteger: "should be integer", "should be positive"; at most a port's.
    if (value !== undefined && !/^\s*[+-]?\d+\s*$/.test(value))
      return { prop, detail: `should be an integer, got ${JSON.stringify(value.slice(0, 64))}` };
    const n = Number(value);
    if (value !== undefined && (n <= 0 || (prop === 'email.port' ? n > 65535 : n > 2_147_483_647)))
      return { prop, detail: `should be positive${prop === 'email.port' ? ' and at most 65535' : ''}, got ${n}` };
  }
  for (const prop of rules.urls) {
    // Never echoed: the URL may carry the robot's token.
    const url = parseUrl(props[prop]!);
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
      return { prop, detail: 'must be an http: or https: URL (the robot or hook to POST the alert to)' };
  }
  for (const prop of rules.booleans) {
    const value = props[prop];
    if (value !== undefined && !/^(true|false)$/i.test(value.trim()))
      return { prop, detail: `must be true or false, got ${JSON.stringify(value.slice(0, 64))}` };
  }
  const email = type === 'EMAIL' ? emailAddressProblem(props) : undefined;
  if (email) return email;
  const throttle = props[THROTTLE_PROP];
  if (throttle !== undefined && !/^\s*\d{1,9}\s*$/.test(throttle))
    return {
      prop: THROTTLE_PROP,
      detail: `must be a number of seconds >= 0 (0: every alert is sent), got ${JSON.stringify(throttle.slice(0, 64))}`,
    };
  return undefined;
}

/** Comma-separated addresses, each with an @ (ElasticJob splits `email.to` on commas; cc and bcc here too). */
function emailAddressProblem(props: Readonly<Record<string, string>>): { prop: string; detail: string } | undefined {
  for (const prop of ['email.from', 'email.to', 'email.cc', 'email.bcc']) {
    const value = props[prop];
    if (value === undefined || value.trim() === '') continue;
    const bad = splitAddresses(value).find((address) => !/^[^\s@]+@[^\s@]+$/.test(address.replace(/^.*<(.*)>$/, '$1')));
    if (bad !== undefined || (prop === 'email.from' && splitAddresses(value).length !== 1))
      return { prop, detail: `must be ${prop === 'email.from' ? 'one address' : 'addresses separated by commas'}` };
  }
  return undefined;
}

export function splitAddresses(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((address) => address.trim())
    .filter((address) => address !== '');
}

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text.trim());
  } catch {
    return undefined;
  }
}

/** A secret property's value as shown: MASK, or a URL's origin and MASK; empty stays empty (no secret to hide). */
export function maskedValue(prop: string, value: string): string {
  if (value === '') return value;
  if (SECRET_PROPS.has(prop)) return MASK;
  if (SECRET_URL_PROPS.has(prop)) {
    const url = parseUrl(value);
    return url && url.origin !== 'null' ? `${url.origin}/${MASK}` : MASK;
  }
  return value;
}

export function isSecretProp(prop: string): boolean {
  return SECRET_PROPS.has(prop) || SECRET_URL_PROPS.has(prop);
}

/** The properties as every surface shows them: secrets masked. The same object when there is none to mask. */
export function maskSecretProps(props: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
  if (!Object.keys(props).some(isSecretProp)) return props;
  return Object.fromEntries(Object.entries(props).map(([prop, value]) => [prop, maskedValue(prop, value)]));
}

/**
 * Properties an operator sends back after editing others: a secret still shown masked (as it was read) keeps its
 * stored value, so that editing a job's cron in the console does not replace its password with `******`.
 */
export function keepMaskedSecrets(
  sent: Readonly<Record<string, string>>,
  stored: Readonly<Record<string, string>>,
): Record<string, string> {
  const kept: Record<string, string> = { ...sent };
  for (const [prop, value] of Object.entries(sent)) {
    const was = stored[prop];
    if (was !== undefined && isSecretProp(prop) && (value === MASK || value === maskedValue(prop, was)))
      kept[prop] = was;
  }
  return kept;
}

/** A property read as a positive integer (validated before), or its default. */
export function intProp(props: Readonly<Record<string, string>>, prop: string, fallback: number): number {
  const value = props[prop];
  return value === undefined || value.trim() === '' ? fallback : Number(value.trim());
}

export function boolProp(props: Readonly<Record<string, string>>, prop: string, fallback: boolean): boolean {
  const value = props[prop];
  return value === undefined || value.trim() === '' ? fallback : value.trim().toLowerCase() === 'true';
}

/**
 * A config node's YAML with the secret properties' values masked, line by line (a dump shows the node as text): a
 * `props` entry is one line as both writers write it (`  email.password: ...`, its value plain or quoted).
 */
export function maskSecretsInConfigYaml(text: string): string {
  return text.replace(
    /^(\s+)(email\.password|dingtalk\.secret|wechat\.webhook|dingtalk\.webhook|webhook\.url):[ \t]*(.*)$/gm,
    (_line, indent: string, prop: string, value: string) => {
      const unquoted = value
        .replace(/^'(.*)'$/, (_m, inner: string) => inner.replace(/''/g, "'"))
        .replace(/^"(.*)"$/, '$1');
      return `${indent}${prop}: ${unquoted === '' ? value : `'${maskedValue(prop, unquoted)}'`}`;
    },
  );
}
