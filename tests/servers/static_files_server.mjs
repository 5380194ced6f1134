// Serves the files of one folder over plain HTTP on 127.0.0.1, for the marketplace tests.
//
//   node static_files_server.mjs DIR
//
// Prints "PORT <n>" once it listens and "GET <path> <status>" for every request.
//   /redirect/<path>  answers 302 with Location /<path>
//   /loop             answers 302 with Location /loop, for ever
//   anything else     the file DIR/<path> (200), or 404 when there is none
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';

const root = path.resolve(process.argv[2] ?? '.');

const server = http.createServer(async (request, response) => {
  const url = new URL(request.url, 'http://127.0.0.1');
  const answer = (status, headers = {}, body = '') => {
    response.writeHead(status, headers);
    response.end(body);
    process.stdout.write(`GET ${url.pathname} ${status}\n`);
  };
  if (url.pathname === '/loop') return answer(302, { Location: '/loop' });
  if (url.pathname.startsWith('/redirect/')) {
    return answer(302, { Location: url.pathname.slice('/redirect'.length) });
  }
  const file = path.join(root, path.normalize(url.pathname));
  if (!file.startsWith(root + path.sep)) return answer(404);
  try {
    const body = await readFile(file);
    return answer(200, { 'Content-Type': 'application/octet-stream' }, body);
  } catch {
    return answer(404, { 'Content-Type': 'text/plain' }, 'not found\n');
  }
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`PORT ${server.address().port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
