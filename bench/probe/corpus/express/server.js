// express-rate-limit in front of express 5, for ratebench's corpus: 30
// requests per 2 s per client address, in the default MemoryStore (a
// client's window opens at its first request and every request counts),
// 429 with draft-8 RateLimit and RateLimit-Policy headers and the legacy
// X-RateLimit-* ones. Listens on 127.0.0.1 only, on the port given as the
// first argument or in PORT (0 or none: any free port), and prints
// "listening on http://127.0.0.1:PORT/" once it accepts connections.
// SIGTERM or SIGINT closes it: it stops accepting, finishes the requests
// in hand and exits 0.
'use strict';

const express = require('express');
const { rateLimit } = require('express-rate-limit');

const port = Number(process.argv[2] ?? process.env.PORT ?? 0);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
	console.error(`bad port ${process.argv[2] ?? process.env.PORT}: want 0 to 65535`);
	process.exit(2);
}

const app = express();
// No proxy in front: req.ip is the connection's peer address.
app.set('trust proxy', false);
app.use(rateLimit({
	windowMs: 2000,
	limit: 30,
	standardHeaders: 'draft-8',
	legacyHeaders: true,
	statusCode: 429,
}));
app.get('/', (req, res) => {
	res.type('text/plain').send('ok\n');
});

const server = app.listen(port, '127.0.0.1', (err) => {
	if (err) {
		console.error(`listen on 127.0.0.1:${port}: ${err.message}`);
		process.exit(1);
	}
	console.log(`listening on http://127.0.0.1:${server.address().port}/`);
});

function stop() {
	server.close(() => process.exit(0));
	// Idle kept-alive connections would hold close() open.
	server.closeIdleConnections();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
