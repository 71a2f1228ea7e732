// A reader's session with a chapter notebook in JupyterLab, in headless Chromium: the browser driver of
// notebooks/harness/lab_test.go (TestLabSession), which starts the server and checks what this script reports.
//
// usage: node session.mjs CONFIG_JSON
//
// CONFIG_JSON names the notebook's URL (with the server's token), the Chromium to drive (never a downloaded one), a
// profile folder, the folder for screenshots, the indexes of the link cell and of the training cell in the notebook
// as committed, the source of a figure cell to add below the link cell, and the time limits of the waits. The
// session, as a reader would do it with mouse and keyboard:
//
//  1. opens the notebook, picks the "Go (gonb)" kernel if JupyterLab asks, waits for the kernel to be connected and
//     clears every output (Edit > Clear Outputs of All Cells), so that what shows next is this session's;
//  2. runs the link cell (click, Shift+Enter), adds a code cell below it (B), types the figure cell into it and runs
//     it, and reads the figure's <img>;
//  3. runs the training cell, waits for its notice that it computes the base agent and for a progress line (a step
//     has ended), presses the toolbar's "Interrupt the kernel" button and waits for the cell to end; then runs it
//     again, waits for its notice that it resumed and for a progress line, and interrupts it once more.
//
// It prints one JSON object on stdout (see `result` below) and its progress on stderr, and saves a screenshot after
// each stage, and "failure.png" when a stage fails; it exits 1 when a stage fails or a wait runs out.
import puppeteer from 'puppeteer-core';
import path from 'node:path';

const cfg = JSON.parse(process.argv[2] ?? '{}');
const start = Date.now();
const log = (msg) => process.stderr.write(`lab: ${((Date.now() - start) / 1000).toFixed(1)}s: ${msg}\n`);

// What the Go test reads.
const result = {
  kernel: '',     // the kernel's name in the notebook's toolbar
  link: '',       // the link cell's output text
  figure: null,   // the figure cell's <img>: {naturalWidth, naturalHeight, alt, png}
  runs: [],       // the training cell's two executions: {seen, atInterrupt, output, stderr, prompt}
};

const browser = await puppeteer.launch({
  executablePath: cfg.chromium,
  headless: true,
  userDataDir: cfg.profile,
  defaultViewport: { width: 1400, height: 1000 },
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--disable-extensions'],
});
const page = await browser.newPage();
page.setDefaultTimeout(cfg.timeouts.page);
let stage = 'open the notebook';
let shot = 0;
async function screenshot(name) {
  const file = path.join(cfg.artifacts, `${String(++shot).padStart(2, '0')}-${name}.png`);
  try {
    await page.screenshot({ path: file, fullPage: false });
  } catch (e) {
    log(`no screenshot ${file}: ${e.message}`);
  }
}

try {
  await session();
  process.stdout.write(JSON.stringify(result) + '\n');
} catch (e) {
  log(`failed at "${stage}": ${e.stack ?? e}`);
  await screenshot('failure');
  process.stdout.write(JSON.stringify(result) + '\n');
  process.exitCode = 1;
} finally {
  await browser.close().catch(() => {});
}

async function session() {
  await page.goto(cfg.url, { waitUntil: 'domcontentloaded' });
  await page.waitForFunction((n) => document.querySelectorAll('.jp-NotebookPanel .jp-WindowedPanel-viewport > .jp-Cell').length === n,
    {}, cfg.cells);
  log(`notebook open: ${cfg.cells} cells`);

  stage = 'start the kernel';
  // JupyterLab asks for a kernel only where the notebook names none it knows; the chapter's name "gonb".
  const deadline = Date.now() + cfg.timeouts.page;
  for (;;) {
    const dialog = await page.$('.jp-Dialog');
    if (dialog) {
      const text = await dialog.evaluate((d) => d.innerText);
      log(`dialog: ${text.replace(/\s+/g, ' ')}`);
      if (!/kernel/i.test(text)) throw new Error(`unexpected dialog: ${text}`);
      await dialog.$eval('select', (s) => {
        const o = [...s.options].find((o) => /Go \(gonb\)/.test(o.textContent));
        if (!o) throw new Error('no "Go (gonb)" kernel to select');
        s.value = o.value;
        s.dispatchEvent(new Event('change', { bubbles: true }));
      });
      await dialog.$eval('.jp-mod-accept', (b) => b.click());
    }
    // The toolbar names the kernel, and its status goes from "initializing" to idle, busy or, with GoNB, "unknown"
    // (until the first cell runs): a cell run before that is dropped.
    const name = await page.$eval('.jp-NotebookPanel-toolbar .jp-KernelName', (e) => e.innerText.trim()).catch(() => '');
    const status = await page.$eval('.jp-NotebookPanel-toolbar .jp-Notebook-ExecutionIndicator',
      (e) => e.dataset.status).catch(() => '');
    if (/Go \(gonb\)/.test(name) && ['idle', 'busy', 'unknown'].includes(status)) break;
    if (Date.now() > deadline) {
      throw new Error(`no kernel after ${cfg.timeouts.page / 1000}s (toolbar: kernel ${JSON.stringify(name)}, status ${status})`);
    }
    await sleep(250);
  }
  result.kernel = await page.$eval('.jp-NotebookPanel-toolbar .jp-KernelName', (e) => e.innerText.trim());
  log(`kernel ${result.kernel}`);

  stage = 'clear the outputs';
  await menu('Edit', 'Clear Outputs of All Cells');
  await page.waitForFunction(() => !document.querySelector('.jp-NotebookPanel .jp-OutputArea-output'));

  stage = 'run the link cell';
  await runCell(cfg.linkCell, 'go work init');
  await waitCell(cfg.linkCell, cfg.timeouts.cell);
  result.link = await outputText(cfg.linkCell);
  log(`link cell: ${result.link.trim()}`);
  await screenshot('link');

  stage = 'add and run a figure cell';
  await page.click(`${cellSelector(cfg.linkCell)} .jp-InputPrompt`);
  await page.keyboard.press('Escape');
  await page.keyboard.press('b'); // command mode: insert a cell below
  const figureCell = cfg.linkCell + 1;
  await page.waitForFunction((sel, n) => {
    const c = document.querySelector(sel);
    return document.querySelectorAll('.jp-NotebookPanel .jp-WindowedPanel-viewport > .jp-Cell').length === n &&
      c.classList.contains('jp-CodeCell') && c.querySelector('.cm-content')?.innerText.trim() === '';
  }, {}, cellSelector(figureCell), cfg.cells + 1);
  await page.click(`${cellSelector(figureCell)} .cm-content`);
  await page.keyboard.sendCharacter(cfg.figureSource); // as pasted: no auto-indent, no closing brackets added
  const typed = await page.$eval(`${cellSelector(figureCell)} .cm-content`, (e) => e.innerText);
  if (typed.replace(/\s+/g, ' ').trim() !== cfg.figureSource.replace(/\s+/g, ' ').trim()) {
    throw new Error(`the figure cell holds ${JSON.stringify(typed)}`);
  }
  await runCell(figureCell, 'nbdisplay.Display');
  await waitCell(figureCell, cfg.timeouts.cell);
  await page.waitForFunction((sel) => {
    const img = document.querySelector(`${sel} .jp-OutputArea-output img`);
    return img && img.complete && img.naturalWidth > 0;
  }, { timeout: 10_000 }, cellSelector(figureCell)).catch(async () => {
    throw new Error(`no figure rendered; the cell's output: ${await outputText(figureCell)}`);
  });
  result.figure = await page.$eval(`${cellSelector(figureCell)} .jp-OutputArea-output img`, (img) => ({
    naturalWidth: img.naturalWidth, naturalHeight: img.naturalHeight, alt: img.alt,
    png: img.src.startsWith('data:image/png;base64,'),
  }));
  log(`figure: ${JSON.stringify(result.figure)}`);
  await page.$eval(`${cellSelector(figureCell)} .jp-OutputArea-output img`, (e) => e.scrollIntoView({ block: 'center' }));
  await screenshot('figure');

  const train = cfg.trainCell + 1; // below the added figure cell
  for (const [i, what] of ['train', 'resume'].entries()) {
    stage = `${what}: run the training cell`;
    await runCell(train, cfg.trainMarker);
    // The first run trains from the start (a cold store), the second resumes: each waits for the notice that says
    // so, then for a progress line (a step has ended, and its progress is what an interrupt saves).
    const want = [i === 0 ? /cache: computing rl_base-\S+/ : /cache: resuming rl_base-\S+ after step \d+/,
      /progress: .+ step \d+\/\d+/];
    const seen = [];
    for (const re of want) {
      stage = `${what}: wait for ${re}`;
      await page.waitForFunction((sel, src) => {
        const out = document.querySelector(`${sel} .jp-Cell-outputArea`);
        return out && new RegExp(src).test(out.innerText);
      }, { timeout: cfg.timeouts.training, polling: 200 }, cellSelector(train), re.source).catch(async (e) => {
        throw new Error(`${e.message}; the cell's output: ${await outputText(train)}`);
      });
      seen.push((await outputText(train)).match(re)[0]);
      log(`${what}: ${seen[seen.length - 1]}`);
    }
    const atInterrupt = await outputText(train);
    await page.$eval(cellSelector(train), (e) => e.scrollIntoView({ block: 'start' }));
    await screenshot(`${what}-running`);

    stage = `${what}: interrupt the kernel`;
    await page.click('.jp-NotebookPanel-toolbar [data-command="notebook:interrupt-kernel"]');
    await waitCell(train, cfg.timeouts.cell);
    const run = {
      seen,
      atInterrupt,
      output: await outputText(train),
      stderr: await page.$$eval(`${cellSelector(train)} .jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]`,
        (es) => es.map((e) => e.innerText).join('')),
      prompt: await prompt(train),
    };
    result.runs.push(run);
    log(`${what}: interrupted; the cell ended: ${JSON.stringify(run.stderr.trim())}`);
    await page.$eval(cellSelector(train), (e) => e.scrollIntoView({ block: 'start' }));
    await screenshot(`${what}-interrupted`);
  }
}

// cellSelector is the CSS selector of the notebook's i-th cell (0-based).
function cellSelector(i) {
  return `.jp-NotebookPanel .jp-WindowedPanel-viewport > .jp-Cell:nth-child(${i + 1})`;
}

// runCell runs the i-th cell as a reader does: a click into its editor, Shift+Enter. Its source must contain marker
// (the right cell, whatever JupyterLab's layout). It records the cell's prompt, which waitCell compares, and waits
// for the run to start (the prompt shows "[*]" or a new count); a run that does not start within 15 seconds (one
// dropped while the kernel connected) is started once more, as a reader would press Shift+Enter again.
async function runCell(i, marker) {
  const sel = cellSelector(i);
  await page.$eval(sel, (e) => e.scrollIntoView({ block: 'start' }));
  const src = await page.$eval(`${sel} .cm-content`, (e) => e.innerText);
  if (!src.includes(marker)) throw new Error(`cell ${i} does not hold ${JSON.stringify(marker)}: ${src.slice(0, 200)}`);
  runCell.before = await prompt(i);
  for (let attempt = 1; ; attempt++) {
    await page.click(`${sel} .cm-content`);
    await page.keyboard.down('Shift');
    await page.keyboard.press('Enter');
    await page.keyboard.up('Shift');
    const started = await page.waitForFunction((sel, before) => {
      const p = document.querySelector(`${sel} .jp-InputPrompt`)?.innerText.trim() ?? '';
      return /^\[(\*|\d+)\]:$/.test(p) && p !== before;
    }, { timeout: 15_000, polling: 100 }, sel, runCell.before).then(() => true, () => false);
    if (started) return;
    if (attempt === 2) throw new Error(`cell ${i} did not start running (prompt ${await prompt(i)})`);
    log(`cell ${i} did not start running (prompt ${await prompt(i)}): Shift+Enter again`);
    runCell.before = await prompt(i);
  }
}

// waitCell waits until the i-th cell has run: its prompt holds an execution count other than before runCell.
async function waitCell(i, timeout) {
  await page.waitForFunction((sel, before) => {
    const p = document.querySelector(`${sel} .jp-InputPrompt`)?.innerText.trim() ?? '';
    return /^\[\d+\]:$/.test(p) && p !== before;
  }, { timeout, polling: 200 }, cellSelector(i), runCell.before ?? '').catch(async (e) => {
    throw new Error(`cell ${i} did not end: ${e.message}; prompt ${await prompt(i)}; output: ${await outputText(i)}`);
  });
}

async function prompt(i) {
  return page.$eval(`${cellSelector(i)} .jp-InputPrompt`, (e) => e.innerText.trim()).catch(() => '?');
}

async function outputText(i) {
  return page.$eval(`${cellSelector(i)} .jp-Cell-outputArea`, (e) => e.innerText).catch(() => '');
}

// menu clicks a menu bar item, then an item of its menu.
async function menu(top, item) {
  const bar = await page.waitForSelector(`::-p-xpath(//li[contains(@class,"lm-MenuBar-item")][.//div[normalize-space(.)="${top}"]])`);
  await bar.click();
  const entry = await page.waitForSelector(`::-p-xpath(//li[contains(@class,"lm-Menu-item")][.//div[contains(@class,"lm-Menu-itemLabel")][normalize-space(.)="${item}"]])`);
  await entry.click();
}

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}
