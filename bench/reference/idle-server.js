// The idle reference for vyre-bench: the smallest Node.js server doing vyred's idle job.
// It listens on $VYRE_HOME/vyred.sock and on loopback TCP ($VYRE_PORT, 0 = any free port),
// answers GET /v1/health like vyred does, and otherwise does nothing until SIGTERM or SIGINT.
// Node's own built-ins only: no framework, no timers.
'use strict';

const fs = require('fs');
const http = require('http');
const path = require('path');

const home = process.env.VYRE_HOME || path.join(process.env.HOME || '.', '.vyre');
const port = Number(process.env.VYRE_PORT || 4477);
const started = Date.now();

fs.mkdirSync(home, { recursive: true, mode: 0o700 });
const socket = path.join(home, 'vyred.sock');
try {
  fs.unlinkSync(socket);
} catch {}

function handle(req, res) {
  let status = 404;
  let body = { error: { code: 'not_found', message: `no route ${req.method} ${req.url}` } };
  if (req.method === 'GET' && req.url === '/v1/health') {
    status = 200;
    body = {
      data: {
        version: 'reference',
        role: 'reference',
        uptime_s: Math.floor((Date.now() - started) / 1000),
      },
    };
  }
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

const onSocket = http.createServer(handle);
const onTcp = http.createServer(handle);

onSocket.listen(socket, () => {
  fs.chmodSync(socket, 0o600);
  onTcp.listen(port, '127.0.0.1', () => {
    const addr = `127.0.0.1:${onTcp.address().port}`;
    fs.writeFileSync(path.join(home, 'vyred.addr'), `${addr}\n`, { mode: 0o600 });
    process.stderr.write(`reference listening on ${socket} and http://${addr}\n`);
  });
});

function stop() {
  onSocket.close();
  onTcp.close();
  try {
    fs.unlinkSync(path.join(home, 'vyred.addr'));
  } catch {}
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
