// Two site profiles with the same register map and different identification codes (test data:
// ACME is no real vendor), written into a profile directory.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

function profile(name: string, code: number): string {
  return `name: ${name}
vendor: ACME
model: ${name.toUpperCase()}
source: { title: "ACME PM protocol (test data)", version: "1", table: "table 1" }
identification:
  registers:
    - { label: "model code", table: holding, address: 256, type: uint16, values: [${code}] }
    - { label: "family", table: input, address: 300, type: string, length: 2, values: ["PM"] }
points:
  - { id: voltage, table: input, address: 0, type: float32, unit: V }
  - { id: power, table: input, address: 2, type: float32, unit: W }
`;
}

export function writeIdentifiedProfiles(dir: string): void {
  writeFileSync(join(dir, 'acme-pm1.yaml'), profile('acme-pm1', 100));
  writeFileSync(join(dir, 'acme-pm2.yaml'), profile('acme-pm2', 200));
}
