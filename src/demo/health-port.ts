// The demo's health port: checked before the gateway starts, so a port already taken (a second
// demo, or the installed service on the same box) is one plain line in the view, not an error log.
import { createServer } from 'node:net';

export interface HealthChoice {
  /** The port for the gateway (0 picks a free one); undefined: run without the endpoint. */
  port: number | undefined;
  /** Why there is no endpoint ('' when there is one). */
  note: string;
}

function listenProblem(port: number): Promise<NodeJS.ErrnoException | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

export async function choosePort(port: number): Promise<HealthChoice> {
  if (port === 0) return { port, note: '' };
  const problem = await listenProblem(port);
  if (problem === undefined) return { port, note: '' };
  const why = problem.code === 'EADDRINUSE' ? `port ${port} is in use (another demo, or the installed fieldgate service?)`
    : problem.code === 'EACCES' ? `port ${port} needs privileges` : `port ${port} cannot be used (${problem.code ?? problem.message})`;
  return { port: undefined, note: `off: ${why}; --health-port N picks another, 0 any free one` };
}
