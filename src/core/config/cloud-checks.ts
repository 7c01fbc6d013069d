// Cross-checks between the gateway's cloud settings and the devices' cloud identities (pure).
// Runs after environment overrides are applied, so secrets set only in the environment count.
// Messages name the missing keys and their environment variables, never their values.
import { checkGatewayMode } from './gateway-mode.js';
import type { CloudSettings, ConfigIssue, GatewaySettings, IdentityConfig, SiteConfig } from './site-types.js';

type GatewayKey = 'apiBaseUrl' | 'appId' | 'accessKey' | 'secretKey' | 'projectKey';

const ENV_NAMES: Record<GatewayKey, string> = {
  apiBaseUrl: 'FIELDGATE_API_BASE_URL',
  appId: 'FIELDGATE_APP_ID',
  accessKey: 'FIELDGATE_ACCESS_KEY',
  secretKey: 'FIELDGATE_SECRET_KEY',
  projectKey: 'FIELDGATE_PROJECT_KEY',
};

function missing(cloud: CloudSettings, keys: readonly GatewayKey[]): string[] {
  return keys.filter((key) => !cloud[key]).map((key) => `gateway.cloud.${key} (${ENV_NAMES[key]})`);
}

/** The one way this identity gets its credential, and what that way needs but lacks. */
function provisioningProblem(c: IdentityConfig, cloud: CloudSettings): string | undefined {
  const hasProjectKey = c.projectKey !== undefined || Boolean(cloud.projectKey);
  if (c.accessToken !== undefined) {
    return hasProjectKey ? undefined : 'an accessToken needs a projectKey here or gateway.cloud.projectKey (FIELDGATE_PROJECT_KEY)';
  }
  if (c.deviceId !== undefined || c.allowCreate) {
    const lacking = missing(cloud, ['apiBaseUrl', 'appId', 'accessKey', 'secretKey']);
    const why = c.deviceId !== undefined ? 'a deviceId' : 'allowCreate';
    return lacking.length === 0 ? undefined : `${why} (interface A) needs ${lacking.join(', ')}`;
  }
  const lacking = missing(cloud, ['apiBaseUrl']);
  if (!hasProjectKey) lacking.push('a projectKey here or gateway.cloud.projectKey (FIELDGATE_PROJECT_KEY)');
  return lacking.length === 0 ? undefined : `a deviceKey alone (device certificate) needs ${lacking.join(' and ')}`;
}

export function checkCloudIdentities(gateway: GatewaySettings, site: SiteConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const cloud = gateway.cloud;
  const withCloud = site.devices.filter((d) => d.cloud);
  if (withCloud.length > 0 && !cloud.mqttUrl) {
    issues.push({ path: 'gateway.cloud.mqttUrl', message: `required (FIELDGATE_MQTT_URL): ${withCloud.length} device(s) have a cloud block` });
  } else if (cloud.identity && !cloud.mqttUrl) {
    issues.push({ path: 'gateway.cloud.mqttUrl', message: 'required (FIELDGATE_MQTT_URL): gateway.cloud.identity is set' });
  }
  if (cloud.identity) {
    const identity = cloud.identity;
    const problem = identity.accessToken === undefined && identity.deviceId === undefined && identity.deviceKey === undefined
      ? 'needs accessToken, deviceId or deviceKey to know fieldgate\'s cloud identity'
      : provisioningProblem(identity, cloud);
    if (problem) issues.push({ path: 'gateway.cloud.identity', message: problem });
  }
  issues.push(...checkGatewayMode(cloud, site));
  site.devices.forEach((device, index) => {
    const problem = device.cloud ? provisioningProblem(device.cloud, cloud) : undefined;
    if (problem) issues.push({ path: `devices[${index}].cloud`, message: problem });
  });
  return issues;
}
