// The secret values a config holds (pure): keys, tokens and URL passwords, for log redaction.
import { urlSecrets } from '../redact.js';
import type { Config } from './config.js';

export function configSecrets(config: Config): string[] {
  const cloud = config.gateway.cloud;
  const values = [cloud.projectKey, cloud.accessKey, cloud.secretKey, ...urlSecrets(cloud.mqttUrl), ...urlSecrets(cloud.apiBaseUrl)];
  for (const device of config.site.devices) {
    values.push(device.cloud?.accessToken, device.cloud?.projectKey, device.cloud?.deviceKey);
  }
  return values.filter((value): value is string => typeof value === 'string' && value.length > 0);
}
