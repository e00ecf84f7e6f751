// A thread of the QR render pool (png.ts): renders data URIs for the main thread, one message per image.
'use strict';
const { parentPort } = require('node:worker_threads');
const { renderQrDataUri } = require('./png-core.cjs');

parentPort.on('message', (job) => {
  try {
    parentPort.postMessage({ id: job.id, uri: renderQrDataUri(job.payload) });
  } catch (error) {
    parentPort.postMessage({ id: job.id, error: String(error && error.message ? error.message : error) });
  }
});
