// Loads one ripple HTML report in headless Chromium (Debian's, through
// playwright-core: no browser download) and prints what a test needs to
// know about it as one JSON object: console errors, boxes per state and
// their colours, timelines, Gantt bars, whether a click opens a dataset's
// details, requests the page tried to make, and whether its screenshot is
// blank. Used by tests/report.rs; never run on anything but ripple's output.
//
//   node check.mjs REPORT.html SCREENSHOT.png
//
// Environment: RIPPLE_TEST_CHROMIUM (the browser), RIPPLE_TEST_PLAYWRIGHT
// (the playwright-core folder).
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

// `extent`: `viewport` takes only the first screen (a 10,000-model report's
// full page takes longer to shoot than the test can wait on two cores).
const [, , report, shot, extent] = process.argv;
const require = createRequire(import.meta.url);
const { chromium } = require(process.env.RIPPLE_TEST_PLAYWRIGHT);

const browser = await chromium.launch({
  executablePath: process.env.RIPPLE_TEST_CHROMIUM,
  args: ['--no-sandbox', '--disable-gpu'],
});
const out = { console_errors: [], page_errors: [], requests: [] };
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') out.console_errors.push(m.text());
  });
  page.on('pageerror', (e) => out.page_errors.push(String(e)));
  const url = pathToFileURL(report).href;
  page.on('request', (r) => {
    if (r.url() !== url && !r.url().startsWith('data:')) out.requests.push(r.url());
  });
  const t0 = Date.now();
  await page.goto(url, { waitUntil: 'load' });
  out.load_ms = Date.now() - t0;
  Object.assign(
    out,
    await page.evaluate(() => {
      const nodes = [...document.querySelectorAll('svg.rp-graph g.rp-node')];
      const fills = {};
      const counts = {};
      for (const n of nodes) {
        const s = n.getAttribute('data-state');
        counts[s] = (counts[s] || 0) + 1;
        const f = getComputedStyle(n.querySelector('rect')).fill;
        (fills[s] = fills[s] || []).includes(f) || fills[s].push(f);
      }
      return {
        title: document.title,
        nodes: nodes.length,
        node_ids: nodes.map((n) => n.getAttribute('data-id')),
        edges: document.querySelectorAll('svg.rp-graph path.rp-edge').length,
        edge_labels: [...document.querySelectorAll('svg.rp-graph text.rp-elabel')].map((t) => t.textContent),
        states: counts,
        fills,
        legend: [...document.querySelectorAll('svg.rp-graph .rp-legend text')].map((t) => t.textContent),
        strips: document.querySelectorAll('details.rp-strip').length,
        strip_states: [...document.querySelectorAll('details.rp-strip')].map((d) => d.getAttribute('data-state')),
        widened_cells: document.querySelectorAll('rect.rp-tl-widened').length,
        bars: document.querySelectorAll('svg.rp-gantt rect.rp-bar').length,
        blackouts: document.querySelectorAll('svg.rp-gantt rect.rp-blackout').length,
        closed: document.querySelectorAll('svg.rp-gantt rect.rp-closed').length,
        cap_line: document.querySelectorAll('svg.rp-gantt line.rp-cap').length,
        change_rows: [...document.querySelectorAll('tr[data-kind]')].map((r) => r.getAttribute('data-kind')),
        scripts: document.querySelectorAll('script').length,
        images: document.querySelectorAll('img').length,
        text: document.body.innerText,
      };
    }),
  );
  // A click on the first box whose dataset has details opens them.
  const target = await page.evaluate(() => {
    const ids = new Set([...document.querySelectorAll('details[data-id]')].map((d) => d.getAttribute('data-id')));
    const n = [...document.querySelectorAll('svg.rp-graph g.rp-node')].find((g) => ids.has(g.getAttribute('data-id')));
    return n ? n.getAttribute('data-id') : null;
  });
  out.clicked = target;
  if (target) {
    await page.evaluate((id) => {
      const n = [...document.querySelectorAll('svg.rp-graph g.rp-node')].find((g) => g.getAttribute('data-id') === id);
      n.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    }, target);
    out.opened = await page.evaluate(
      (id) => [...document.querySelectorAll('details[data-id]')].filter((d) => d.getAttribute('data-id') === id && d.open).length,
      target,
    );
  }
  await page.evaluate(() => {
    document.querySelectorAll('details[open]').forEach((d) => (d.open = false));
    document.querySelectorAll('.rp-hit').forEach((d) => d.classList.remove('rp-hit'));
    window.scrollTo(0, 0);
  });
  const png = await page.screenshot({ path: shot, fullPage: extent !== 'viewport' });
  // Blank or not: distinct colours among sampled pixels, decoded by the
  // browser itself on a page of its own.
  const probe = await browser.newPage();
  out.screenshot_colours = await probe.evaluate(async (b64) => {
    const img = new Image();
    img.src = 'data:image/png;base64,' + b64;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.width;
    c.height = img.height;
    const ctx = c.getContext('2d');
    ctx.drawImage(img, 0, 0);
    const data = ctx.getImageData(0, 0, c.width, c.height).data;
    const seen = new Set();
    for (let i = 0; i < data.length; i += 4 * 97) seen.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
    return seen.size;
  }, png.toString('base64'));
  out.screenshot_size = [png.length];
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(out) + '\n');
