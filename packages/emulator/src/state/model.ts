// Records held by the emulator's in-memory state (internal shapes; views.ts renders API shapes).
import type { Primitive } from '../http/validate.js';

export type Tags = Record<string, string>;
/** Where an attribute value came from. */
export type AttrType = 'report' | 'push' | 'cloud';

export interface ProjectRecord {
  id: string;
  name: string;
  descr: string;
  tags: Tags;
  project_key: string;
  /** App-side MQTT subscription login (the cloud's ProjectViewKey / ProjectViewSecret). */
  view_key: string;
  view_secret: string;
}

export interface ApiAppRecord {
  app_id: string;
  access_key: string;
  secret_key: string;
}

export interface AdminRecord {
  id: string;
  account: string;
  password: string;
  name: string;
  email: string;
  tags: Tags;
}

export interface DataStreamRecord {
  identifier: string;
  name: string;
  /** hex, text or json */
  type: string;
}

export interface AttributeModel {
  identifier: string;
  name: string;
  attr_type: string;
  data_type: string;
  data_options: Record<string, unknown>;
}

export interface ExtendInfoDefinition {
  id: string;
  info_type: string;
  name: string;
  descr: string;
  enabled: boolean;
  options: Record<string, unknown>;
  create_time: number;
  update_time: number;
  is_standard: boolean;
}

/** A gateway speaks for the sub-devices bound to it (docs/protocol.md §3, gateway mode). */
export type DeviceKind = 'direct' | 'gateway' | 'sub_device';

export interface DeviceTypeRecord {
  id: string;
  kind: DeviceKind;
  name: string;
  descr: string;
  tags: Tags;
  create_time: number;
  conn_protocol: string;
  conn_type: string;
  type_key: string | undefined;
  allow_auto_create: boolean;
  data_streams: DataStreamRecord[];
  attributes: AttributeModel[];
  extend_infos: ExtendInfoDefinition[];
}

export interface GroupRecord {
  id: string;
  name: string;
  descr: string;
  tags: Tags;
  create_time: number;
  parent: string | undefined;
  children: string[];
}

export interface AttributeValue {
  value: unknown;
  attr_type: AttrType;
  ts: number;
}

export interface HistoryPoint {
  ts: number;
  name: string;
  value: unknown;
  type: AttrType;
}

export interface DeviceRecord {
  id: string;
  name: string;
  descr: string;
  device_key: string;
  access_token: string;
  view_token: string;
  device_code: string;
  tags: Tags;
  create_time: number;
  type: string;
  groups: string[];
  attributes: Map<string, AttributeValue>;
  /** Kept in ts order, oldest first. */
  history: HistoryPoint[];
  /** Latest time of each kind of device message. */
  active: Record<string, number>;
  extend_infos: Record<string, Primitive>;
  standard_infos: Record<string, Record<string, Primitive>>;
  /** Last value write per extended-info definition id (else the definition's update_time). */
  info_update_times: Record<string, number>;
  /** A sub-device's binding: its gateway's device id and its address there (both or neither). */
  binding: SubDeviceBinding | undefined;
}

export interface SubDeviceBinding {
  gateway: string;
  /** Unique among the gateway's sub-devices; for Modbus usually the unit id. */
  addr: string;
}

export interface RoleRecord {
  id: string;
  name: string;
  descr: string;
  allow_operate_device: boolean;
  allow_alarm_msg_maintain: boolean;
  allow_add_device: boolean;
  create_time: number;
}

export interface CustomerRecord {
  id: string;
  account: string;
  password: string;
  name: string;
  descr: string;
  email: string;
  mobile: string;
  tags: Tags;
  locale: string;
  create_time: number;
  roles: string[];
  devices: string[];
}

/** alarm_status: 1 = raised, 0 = recovered (the emulator's choice). */
export interface AlarmLogRecord {
  id: string;
  device_id: string;
  alarm_status: number;
  alarm_level: number;
  alarm_info: Record<string, unknown>;
  create_time: number;
  notify_logs: unknown[];
}

export interface SeedData {
  project: ProjectRecord;
  apiApps: ApiAppRecord[];
  admins: AdminRecord[];
  types: DeviceTypeRecord[];
  groups: GroupRecord[];
  devices: DeviceRecord[];
  roles: RoleRecord[];
  customers: CustomerRecord[];
  alarms: AlarmLogRecord[];
}
