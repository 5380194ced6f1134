// The stdin side of the raw test servers: newline-delimited JSON-RPC messages, each handed
// to `handle` as parsed JSON (blank lines skipped); the process ends when stdin does.
export function onStdinMessages(handle) {
  let buffer = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    buffer += chunk;
    let newline;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      if (line.trim()) handle(JSON.parse(line));
    }
  });
  process.stdin.on('end', () => process.exit(0));
}
