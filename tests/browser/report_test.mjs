// The HTML report of `gov simulate --report` in a real browser: Debian's chromium driven by
// playwright-core (never a browser download). Usage: node report_test.mjs REPORT.html SCREENSHOT.png
// [TEAM]. Fails (exit 1, saying why) when a chart has no size, the console has an error, the
// page makes any network request, or choosing TEAM in the filter does not redraw the charts
// for it. Keeps a screenshot (full page, after the filter) as the test's artifact.
import { chromium } from "playwright-core";
import { pathToFileURL } from "node:url";

const [report, screenshot, team] = process.argv.slice(2);
if (!report || !screenshot) {
  console.error("usage: node report_test.mjs REPORT.html SCREENSHOT.png [TEAM]");
  process.exit(2);
}

const problems = [];
const browser = await chromium.launch({
  executablePath: process.env.GOV_CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--no-first-run", "--disable-domain-reliability"],
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const url = pathToFileURL(report).href;
  // Every request the page makes: only the report itself may be loaded.
  page.on("request", (request) => {
    if (request.url() !== url) problems.push(`network request: ${request.url()}`);
  });
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console error: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  await page.route("**/*", (route) => (route.request().url() === url ? route.continue() : route.abort()));
  await page.goto(url, { waitUntil: "load" });

  const sizes = async () =>
    page.$$eval("svg.chart", (charts) =>
      charts.map((c) => {
        const box = c.getBoundingClientRect();
        return { id: c.id || c.getAttribute("data-chart"), width: box.width, height: box.height, marks: c.childElementCount };
      }));
  // GOV_EXPECT_SPAN: how the header's span must begin (an SRE helper's finding: a trace of Unix
  // times read "from d20362 00:00:00" where the usage report printed 2025-10-01).
  if (process.env.GOV_EXPECT_SPAN) {
    const span = await page.$eval("#span", (e) => e.textContent);
    if (!span.startsWith(process.env.GOV_EXPECT_SPAN)) problems.push(`the span reads \`${span}\`, not \`${process.env.GOV_EXPECT_SPAN}...\``);
  }
  const all = await sizes();
  // A simulation report, or a what-if comparison (gov simulate A.gov B.gov --report).
  const comparison = (await page.$("#pending")) === null;
  const expected = comparison ? ["d-wait", "d-gpu", "d-borrowed", "d-preempted"]
                              : ["pending", "waits", "preemptions", "utilization", "usage"];
  for (const name of expected) {
    if (!all.some((c) => c.id === name)) problems.push(`no chart \`${name}\``);
  }
  for (const c of all) {
    if (!(c.width > 0 && c.height > 0)) problems.push(`chart \`${c.id}\` has no size (${c.width}x${c.height})`);
    if (c.marks === 0) problems.push(`chart \`${c.id}\` is empty`);
  }
  // Every line is drawn inside its chart: a value above the axis (a utilization over 100 %
  // on a fixed 0-100 axis) was drawn above the chart, which then looked empty.
  const outside = await page.$$eval("svg.chart", (charts) =>
    charts.flatMap((c) => {
      const height = Number((c.getAttribute("viewBox") || "0 0 0 0").split(" ")[3]);
      return [...c.querySelectorAll("path")].flatMap((p) => {
        const ys = (p.getAttribute("d").match(/-?[0-9.]+,-?[0-9.]+/g) || []).map((xy) => Number(xy.split(",")[1]));
        return ys.some((y) => y < 0 || y > height) ? [c.id || c.getAttribute("data-chart")] : [];
      });
    }));
  for (const id of new Set(outside)) problems.push(`chart \`${id}\` draws a line outside itself`);
  // A team with more tasks that never run in B: its wait bar is a caution, never a green
  // improvement (an SRE helper's finding: B's missing wait was read as 0).
  if (comparison) {
    const starved = await page.evaluate(() => D.teams.filter((x) => x.b.never_admitted > x.a.never_admitted).map((x) => x.team));
    for (const name of starved) {
      const fill = await page.$eval("#d-wait", (svg, n) => {
        const rect = svg.querySelector(`rect[data-team="${n}"]`);
        return rect ? rect.getAttribute("fill") : "none";
      }, name);
      if (fill === "#2f9e6e") problems.push(`\`${name}\` runs fewer tasks with B, but its wait bar is a green improvement`);
      const columns = await page.$$eval("#teams thead th", (ths) => ths.map((th) => th.textContent));
      if (!columns.includes("never ran A")) problems.push("the teams table has no `never ran` column");
      const note = await page.$eval("#starved", (div) => div.textContent);
      if (!note.includes(`${name} has more tasks that never ran in B`)) problems.push(`no note for \`${name}\`: ${note}`);
    }
  }
  const table = comparison ? "#changed" : "#worst";
  const rowsAll = await page.$$eval(`${table} tbody tr`, (rows) => rows.length);

  const pendingBefore = comparison ? "" : await page.$eval("#pending", (svg) => svg.innerHTML);
  if (team) {
    const options = await page.$$eval("#team option", (os) => os.map((o) => o.textContent));
    if (!options.includes(team)) problems.push(`the team filter has no \`${team}\` (${options.join(", ")})`);
    await page.selectOption("#team", { label: team });
    const chosen = await page.evaluate(() => document.body.getAttribute("data-team"));
    if (chosen !== team) problems.push(`the filter chose \`${chosen}\`, not \`${team}\``);
    const teams = await page.$$eval(`${table} tbody tr td:nth-child(2)`, (tds) => tds.map((td) => td.textContent));
    if (teams.some((t) => t !== team)) problems.push(`the ${table} table lists other teams: ${teams.join(", ")}`);
    if (comparison) {
      const rows = await page.$$eval("#teams tbody tr td:first-child", (tds) => tds.map((td) => td.textContent));
      if (rows.length !== 1 || rows[0] !== team) problems.push(`the teams table shows ${rows.join(", ")}, not \`${team}\``);
      const bars = await page.$$eval("#d-gpu rect", (rs) => rs.length);
      if (bars !== 1) problems.push(`the GPU-hours chart has ${bars} bars for one team`);
    }
  }
  if (team && !comparison) {
    const titles = await page.$$eval("#usage h3", (hs) => hs.map((h) => h.textContent));
    if (!titles.length || !titles.every((t) => t.endsWith(team))) problems.push(`usage charts are not \`${team}\`'s: ${titles.join(" | ")}`);
    // The pending chart is redrawn with the team's own series: when it differs from all teams'
    // sum, the drawing must differ too.
    const differs = await page.evaluate((name) => {
      const t = D.teams.indexOf(name);
      const all = D.pending.reduce((acc, p) => acc.map((v, i) => v + (p[i] || 0)), new Array(D.buckets).fill(0));
      return D.pending[t].some((v, i) => v !== all[i]);
    }, team);
    const pendingAfter = await page.$eval("#pending", (svg) => svg.innerHTML);
    if (differs && pendingAfter === pendingBefore) problems.push("the pending chart did not change with the filter");
    const series = await page.evaluate((name) => D.usage.filter((s) => s.team === D.teams.indexOf(name)).length, team);
    if (titles.length !== series) problems.push(`${titles.length} usage charts for \`${team}\`, expected ${series}`);
  }
  if (team) {
    for (const c of await sizes()) {
      if (!(c.width > 0 && c.height > 0)) problems.push(`after the filter, chart \`${c.id}\` has no size`);
    }
  }
  await page.screenshot({ path: screenshot, fullPage: true });
  console.log(`${all.length} charts, ${rowsAll} rows in ${table}; screenshot ${screenshot}`);
} finally {
  await browser.close();
}
if (problems.length) {
  for (const p of problems) console.error(p);
  process.exit(1);
}
