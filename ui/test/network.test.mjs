// The private network as the app shows it (src/lib/network.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agoText, configFileName, isLoopback, joinError, kindText, linkText, qrImageSrc, suggestEndpoint } from '../.test-build/network.js';

test('a loopback host is never offered to a phone as the endpoint', () => {
  for (const h of ['localhost', 'LOCALHOST', 'vyre.localhost', '127.0.0.1', '127.1.2.3', '::1', '[::1]', '0.0.0.0', '']) assert.equal(isLoopback(h), true, h);
  for (const h of ['vyre.example.com', '192.168.1.20', '100.71.12.1', '[2001:db8::1]', 'localhost.example.com', '1270.0.0.1']) assert.equal(isLoopback(h), false, h);
});

test('the endpoint field starts with the one vyred knows, else this page\'s host and WireGuard\'s port', () => {
  assert.equal(suggestEndpoint('vyre.example.com:51821', 'other.example'), 'vyre.example.com:51821');
  assert.equal(suggestEndpoint(' vyre.example.com:51821 ', 'localhost'), 'vyre.example.com:51821');
  assert.equal(suggestEndpoint(null, 'box.example.com'), 'box.example.com:51820');
  assert.equal(suggestEndpoint('', '192.168.1.20'), '192.168.1.20:51820');
  assert.equal(suggestEndpoint(null, '[2001:db8::1]'), '[2001:db8::1]:51820');
  assert.equal(suggestEndpoint(null, '2001:db8::1'), '[2001:db8::1]:51820');
  assert.equal(suggestEndpoint(null, 'localhost'), '');
  assert.equal(suggestEndpoint(undefined, '127.0.0.1'), '');
});

test('the QR code is an image address that carries the SVG as text, escaped', () => {
  const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="10"><rect fill="#fff"/></svg>';
  const src = qrImageSrc(svg);
  assert.ok(src.startsWith('data:image/svg+xml;charset=utf-8,'));
  assert.doesNotMatch(src.slice(src.indexOf(',') + 1), /[<>"# ]/, 'nothing that ends the attribute or the address');
  assert.equal(decodeURIComponent(src.slice(src.indexOf(',') + 1)), svg);
});

test('the configuration file is vyre-<name>.conf, a name WireGuard takes as a tunnel name', () => {
  assert.equal(configFileName('phone'), 'vyre-phone.conf');
  assert.equal(configFileName('Ada\'s iPhone'), 'vyre-ada-s-ipho.conf');
  assert.equal(configFileName('Laptop (work)'), 'vyre-laptop-wor.conf');
  assert.equal(configFileName('Téléphone'), 'vyre-telephone.conf');
  assert.equal(configFileName('my phone-'), 'vyre-my-phone.conf');
  assert.equal(configFileName('  '), 'vyre-device.conf');
  assert.equal(configFileName('電話'), 'vyre-device.conf');
  for (const n of ['phone', 'Ada\'s iPhone', 'a very long laptop name indeed', '---x---']) {
    const tunnel = configFileName(n).replace(/\.conf$/, '');
    assert.ok(tunnel.length <= 15, tunnel);
    assert.match(tunnel, /^[a-zA-Z0-9_=+.-]+$/);
    assert.doesNotMatch(tunnel, /[-.]$/);
  }
});

test('a refused join says why in words, and a missing endpoint asks for the field', () => {
  const missing = joinError('endpoint_unknown', 'say where devices reach this machine: endpoint (host:port, e.g. vyre.example.com:51820), or network.endpoint in config.json');
  assert.equal(missing.endpoint, true);
  assert.match(missing.text, /^Say where devices reach this machine: say where/);
  const bad = joinError('invalid_input', '"nope" is not host:port (e.g. vyre.example.com:51820 or 203.0.113.7:51820)');
  assert.equal(bad.endpoint, true);
  const shape = joinError('invalid_input', 'endpoint: must match the pattern ^([A-Za-z0-9]...)$');
  assert.equal(shape.endpoint, true);
  assert.match(shape.text, /host:port, e\.g\. vyre\.example\.com:51820/);
  assert.doesNotMatch(shape.text, /pattern/);
  const name = joinError('invalid_input', 'name: must be printable text');
  assert.deepEqual(name, { text: 'The device could not join: name: must be printable text', endpoint: false });
  assert.deepEqual(joinError('network_down', 'cannot listen for WireGuard on UDP 0.0.0.0:51820: Address in use'), {
    text: 'The private network could not come up: cannot listen for WireGuard on UDP 0.0.0.0:51820: Address in use',
    endpoint: false,
  });
  assert.match(joinError('network_off', 'the network is turned off here').text, /^The private network is turned off on this machine: /);
  assert.match(joinError('network_full', 'every address is taken').text, /^The private network has no address left: /);
});

test('a device\'s link reads as connected, when it last spoke, or not since Vyre started', () => {
  assert.equal(linkText({ connected: true, last_packet_s: 3 }), 'connected');
  assert.equal(linkText({ connected: false, last_packet_s: 400 }), 'last seen 6 min ago');
  assert.equal(linkText({ connected: false, last_packet_s: 0 }), 'last seen just now');
  assert.equal(linkText({ connected: false, last_packet_s: null }), 'not seen since Vyre started');
  assert.equal(agoText(42), '42 s ago');
  assert.equal(agoText(7200), '2 h ago');
  assert.equal(agoText(86400), '1 day ago');
  assert.equal(agoText(3 * 86400 + 5), '3 days ago');
  assert.equal(agoText(-4), 'just now');
  assert.equal(kindText('network'), 'on the private network');
  assert.equal(kindText('browser'), 'browser');
});
