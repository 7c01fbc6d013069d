// The secret values a config holds (pure): keys, tokens and URL passwords, for log redaction.
import { urlSecrets } from '../redact.js';
import type { Config } from './config.js';

export function configSecrets(config: Config): string[] {
  const cloud = config.gateway.cloud;
  const values = [cloud.projectKey, cloud.accessKey, cloud.secretKey, ...urlSecrets(cloud.mqttUrl), ...urlSecrets(cloud.apiBaseUrl), config.gateway.web?.passwordHash, cloud.identity?.accessToken, cloud.identity?.projectKey];
  // Not the device key: it is the cloud's identifier of a device (DeviceKey, like its name), often
  // the device's name itself; a credential comes with it only from the project key, a secret.
  for (const device of config.site.devices) {
    values.push(device.cloud?.accessToken, device.cloud?.projectKey);
  }
  return values.filter((value): value is string => typeof value === 'string' && value.length > 0);
}
