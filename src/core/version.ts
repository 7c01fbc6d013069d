export const FIELDGATE_VERSION = '0.1.0';
