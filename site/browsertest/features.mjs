// The browser driver of site/features_test.go (TestSiteFeatures). puppeteer-core drives the machine's Chromium
// (it downloads none) through the built site as a reader would, and prints what it saw as one JSON object; the
// Go test judges it. Its one argument is the plan, as JSON:
//
//   {"base": "http://127.0.0.1:N/", "chromium": "/usr/bin/chromium", "profile": DIR, "shots": DIR,
//    "pages": ["index.html", …], "search": {"page": …, "query": "masking", "want": "12.4-….html"},
//    "copy": {"page": …}, "theme": {"pages": [A, B]}, "phone": {"width": 390, "height": 844},
//    "follow": ["Section 12.2", "Figure 12.1"]}
import puppeteer from "puppeteer-core";

const plan = JSON.parse(process.argv[2]);
const wait = 15000;
const report = {};

const browser = await puppeteer.launch({
  executablePath: plan.chromium,
  headless: true,
  userDataDir: plan.profile,
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions"],
});
try {
  const context = browser.defaultBrowserContext();
  await context.overridePermissions(new URL(plan.base).origin, ["clipboard-read", "clipboard-write", "clipboard-sanitized-write"]);
  const page = await browser.newPage();
  page.setDefaultTimeout(wait);
  const errors = [];
  page.on("pageerror", (e) => errors.push(`${page.url()}: ${e.message}`));
  const open = (file) => page.goto(plan.base + file, { waitUntil: "load" });
  const shot = (name) => (plan.shots ? page.screenshot({ path: `${plan.shots}/${name}.png` }) : null);

  await page.setViewport({ width: 1280, height: 900 });
  report.search = await search(page, open, shot);
  report.copy = await copy(page, open);
  report.theme = await theme(page, open, shot);
  await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "light" }]);
  await page.setViewport({ width: plan.phone.width, height: plan.phone.height, isMobile: true, hasTouch: true });
  report.phone = [];
  for (const file of plan.pages) report.phone.push(await phone(page, open, shot, file));
  report.phoneSearch = await phoneSearch(page, open, shot);
  report.follow = [];
  for (const text of plan.follow) report.follow.push(await follow(page, open, report.phone, text));
  report.errors = errors;
} catch (e) {
  report.error = String(e.stack || e);
} finally {
  await browser.close();
}
console.log(JSON.stringify(report));

// search types the query into the search box as a reader would, reports the results, and follows the first that
// goes to the wanted page.
async function search(page, open, shot) {
  await open(plan.search.page);
  await page.click("#search");
  await page.keyboard.type(plan.search.query, { delay: 20 });
  await page.waitForSelector("#search-results li a", { visible: true });
  await shot("search");
  const results = await page.$$eval("#search-results li a", (as) =>
    as.map((a) => ({ href: a.href, title: a.querySelector("strong").textContent, text: a.querySelector("span").textContent })));
  const i = results.findIndex((r) => new URL(r.href).pathname.endsWith("/" + plan.search.want));
  if (i < 0) return { results };
  const links = await page.$$("#search-results li a");
  await Promise.all([page.waitForNavigation({ waitUntil: "load" }), links[i].click()]);
  const landed = await page.evaluate(() => ({
    url: location.href,
    h1: document.querySelector("h1").textContent,
    target: !location.hash || !!document.getElementById(decodeURIComponent(location.hash.slice(1))),
    holds: document.querySelector("article").textContent.toLowerCase().includes("masking"),
  }));
  return { results, landed };
}

// copy presses the copy button of the page's first visible code cell and reads the clipboard.
async function copy(page, open) {
  await open(plan.copy.page);
  const code = await page.$eval("div.code-cell .code-wrap code", (c) => c.textContent);
  const button = await page.$("div.code-cell .code-wrap button.copy");
  if (!button) return { code, clipboard: null };
  await page.bringToFront();
  await button.click();
  await page.waitForFunction((b) => b.textContent !== "Copy", {}, button);
  const label = await button.evaluate((b) => b.textContent);
  const clipboard = await page.evaluate(() => navigator.clipboard.readText());
  return { code, clipboard, label };
}

// colours are what the page shows: the body's background and text, a code block's background, and the toggle.
function colours(page) {
  return page.evaluate(() => {
    const style = (sel, prop) => {
      const el = document.querySelector(sel);
      return el ? getComputedStyle(el)[prop] : "";
    };
    let stored = null;
    try {
      stored = localStorage.getItem("agentrl-site-theme");
    } catch {}
    return {
      bg: style("body", "backgroundColor"),
      fg: style("body", "color"),
      code: style("pre.code", "backgroundColor"),
      pressed: document.querySelector(".theme-toggle").getAttribute("aria-pressed"),
      stored,
    };
  });
}

// theme reads the colours under the system's light and dark schemes, then presses the toggle under the dark
// scheme, reloads, opens another page, and presses it again.
async function theme(page, open, shot) {
  const [a, b] = plan.theme.pages;
  // scheme sets the system's colour scheme and waits until the page has heard of the change.
  const scheme = async (value) => {
    const heard = page.evaluate((dark) => new Promise((done) => {
      const query = matchMedia("(prefers-color-scheme: dark)");
      if (query.matches === dark) return done();
      query.addEventListener("change", () => setTimeout(done, 0), { once: true });
    }), value === "dark");
    await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value }]);
    await heard;
  };
  const toggle = () => page.click(".theme-toggle");
  const r = {};
  await scheme("light");
  await open(a);
  r.light = await colours(page);
  await scheme("dark");
  r.dark = await colours(page);
  await shot("dark");
  await toggle();
  r.toggled = await colours(page);
  await page.reload({ waitUntil: "load" });
  r.reloaded = await colours(page);
  await open(b);
  r.otherPage = await colours(page);
  await toggle();
  r.toggledBack = await colours(page);
  await scheme("light");
  await toggle();
  r.darkOnLight = await colours(page);
  await toggle();
  return r;
}

// phone opens a page at the phone's size and reports its width against the viewport's, with the menu closed and
// open; what is folded; and the cross-references and the unlinked mentions of sections and figures in its text.
async function phone(page, open, shot, file) {
  await open(file);
  const width = () =>
    page.evaluate(() => ({
      scroll: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth),
      viewport: document.documentElement.clientWidth,
      inner: window.innerWidth,
    }));
  const r = { page: file, closed: await width() };
  await shot("phone-" + file.replace(/\.html$/, ""));
  r.tocShown = await page.$eval("#toc", (t) => getComputedStyle(t).display !== "none");
  await page.click(".menu-button");
  r.menu = await page.$eval("#toc", (t) => {
    const box = t.getBoundingClientRect();
    return { shown: getComputedStyle(t).display !== "none" && box.height > 0, links: t.querySelectorAll("a").length };
  });
  r.open = await width();
  await shot("phone-menu-" + file.replace(/\.html$/, ""));
  await page.click(".menu-button");
  Object.assign(r, await page.evaluate(() => {
    const folded = (sel) => {
      const d = document.querySelector(sel);
      return d ? { present: true, open: d.open, text: d.textContent } : { present: false };
    };
    const mention = /\b(?:Section|Figure|figure)[ \u00a0]\d+\.\d+\b|§[ \u00a0]?\d+\.\d+\b/g;
    const unlinked = [];
    const walker = document.createTreeWalker(document.querySelector("article"), NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (n.parentElement.closest("a, h1, h2, h3, h4, h5, h6, code, pre, .source")) continue;
      for (const m of n.data.matchAll(mention)) unlinked.push(m[0]);
    }
    return {
      numerics: folded("details.numerics"),
      plumbing: folded("details.plumbing"),
      xrefs: [...document.querySelectorAll("article a.xref")].map((a) => ({ text: a.textContent, href: a.href })),
      figures: [...document.querySelectorAll("figure[id]")].map((f) => ({ id: f.id, caption: f.querySelector("figcaption")?.textContent ?? "" })),
      unlinked,
    };
  }));
  return r;
}

// phoneSearch shows the search's results at the phone's size and reports the page's width.
async function phoneSearch(page, open, shot) {
  await open(plan.search.page);
  await page.click("#search");
  await page.keyboard.type(plan.search.query);
  await page.waitForSelector("#search-results li a", { visible: true });
  await shot("phone-search");
  return page.evaluate(() => {
    const box = document.getElementById("search-results").getBoundingClientRect();
    return {
      scroll: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth),
      viewport: document.documentElement.clientWidth,
      left: box.left,
      right: box.right,
    };
  });
}

// follow clicks the first cross-reference whose text is text, on the first page that has one to another page,
// and reports where it lands.
async function follow(page, open, pages, text) {
  for (const p of pages) {
    const i = p.xrefs.findIndex((x) => x.text === text && new URL(x.href).pathname !== "/" + p.page);
    if (i < 0) continue;
    await open(p.page);
    const links = await page.$$("article a.xref");
    await Promise.all([page.waitForNavigation({ waitUntil: "load" }), links[i].click()]);
    return {
      text,
      from: p.page,
      href: p.xrefs[i].href,
      landed: await page.evaluate(() => {
        const target = location.hash ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
        return {
          url: location.href,
          h1: document.querySelector("h1").textContent,
          target: target ? { tag: target.tagName.toLowerCase(), text: target.textContent.slice(0, 200) } : null,
        };
      }),
    };
  }
  return { text, from: null };
}
