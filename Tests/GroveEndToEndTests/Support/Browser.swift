import Foundation

/// Headless Chromium driven by Selenium (Debian's `chromium` and `chromium-driver`, PyPI's
/// `selenium`; Scripts/test.sh installs them): the live view's tests open its page as a person
/// would. Each run is one python process following a list of steps, printing one JSON line per
/// step; a step's wait is bounded (30 s) and polls its condition.
struct Browser {
    static let chromium = "/usr/bin/chromium"
    static let driver = "/usr/bin/chromedriver"

    /// Why the browser tests cannot run here, or `nil` when they can.
    static let missing: String? = {
        for path in [chromium, driver] where !FileManager.default.isExecutableFile(atPath: path) {
            return "\(path) is not installed (apt-get install chromium chromium-driver; Scripts/test.sh does)"
        }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = ["python3", "-c", "import selenium"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        do {
            try probe.run()
            probe.waitUntilExit()
        } catch {
            return "python3 cannot be run: \(error)"
        }
        return probe.terminationStatus == 0 ? nil : "python3 has no selenium (pip install selenium; Scripts/test.sh does)"
    }()

    /// One step: `open` a URL, `ready` (write a file once the page's stream is live), `wait` for
    /// a CSS selector to match, `gone` (until it matches nothing), `click`, `type` into a field,
    /// read `text`, or `screenshot` to a file.
    enum Step {
        case open(String)
        case ready(URL)
        case wait(String)
        case gone(String)
        case click(String)
        case type(String, String)
        case text(String)
        case screenshot(URL)
        /// POST `body` (JSON text) to `path` from the page, as its own script does: the value is
        /// the status and the answer.
        case post(String, String)

        var json: [String: Any] {
            switch self {
            case .open(let url): ["open": url]
            case .ready(let file): ["ready": file.path]
            case .wait(let css): ["wait": css]
            case .gone(let css): ["gone": css]
            case .click(let css): ["click": css]
            case .type(let css, let text): ["type": [css, text]]
            case .text(let css): ["text": css]
            case .screenshot(let file): ["screenshot": file.path]
            case .post(let path, let body): ["post": [path, body]]
            }
        }
    }

    /// Runs `steps` in a new browser; returns the process, whose stdout has one line per step
    /// done (`{"step":N,"ok":true,"value":…}`) and, at the first that failed, its reason.
    static func start(_ steps: [Step], in directory: URL) async throws -> ChildProcess {
        let script = directory.appendingPathComponent("browser.py")
        try Self.script.write(to: script, atomically: true, encoding: .utf8)
        let plan = String(decoding: try JSONSerialization.data(withJSONObject: steps.map(\.json)), as: UTF8.self)
        return try await ChildProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script.path, plan], outputIn: directory, label: "browser")
    }

    /// The steps' results, once the browser process ended (within `timeout`).
    static func results(of browser: ChildProcess, timeout: Duration = .seconds(90)) async -> [[String: Any]] {
        _ = await browser.waitForExit(timeout: timeout)
        if browser.isRunning { _ = browser.stop() }
        return browser.stdout.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    static let script = #"""
    import json, sys, time
    from selenium import webdriver
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1600,1000", "--disable-gpu"]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    # What the page's event stream carried, for a step that times out: each message as it came
    # (its first 300 characters), the last 300 kept.
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
      window.__received = [];
      const Original = window.EventSource;
      window.EventSource = function (url) {
        const source = new Original(url);
        const note = (text) => { window.__received.push(new Date().toISOString().slice(11, 23) + " " + text); if (window.__received.length > 300) window.__received.shift(); };
        source.addEventListener("open", () => note("(open)"));
        source.addEventListener("error", () => note("(error, state " + source.readyState + ")"));
        source.addEventListener("message", (m) => note(m.data.slice(0, 300)));
        return source;
      };"""})

    def diagnosis():
        try:
            received = driver.execute_script("return window.__received || []")
            console = [entry.get("message", "") for entry in driver.get_log("browser")]
            return "\nreceived:\n" + "\n".join(received) + "\nconsole:\n" + "\n".join(console)
        except Exception as error:
            return "\n(no diagnosis: " + repr(error) + ")"
    wait = WebDriverWait(driver, 30, poll_frequency=0.05)

    # The text of the first match (a space when it has none, so that a match is never falsy).
    TEXT = "const e = document.querySelector(arguments[0]); return e ? (e.innerText || ' ') : null;"
    CLICK = "const e = document.querySelector(arguments[0]); if (!e) return false; e.click(); return true;"

    POST = """const done = arguments[arguments.length - 1];
    fetch(arguments[0], { method: "POST", headers: { "Content-Type": "application/json", "X-Grove-View": "1" }, body: arguments[1] })
      .then(async (r) => done(r.status + " " + await r.text())).catch((e) => done("failed: " + e));"""

    def report(index, ok, value=None):
        print(json.dumps({"step": index, "ok": ok, "value": value}), flush=True)

    try:
        for index, step in enumerate(json.loads(sys.argv[1])):
            (kind, argument), = step.items()
            try:
                if kind == "open":
                    driver.get(argument)
                    report(index, True, driver.find_element(By.TAG_NAME, "body").text[:400])
                elif kind == "ready":
                    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#connection.up"))
                    open(argument, "w").close()
                    report(index, True)
                elif kind == "wait":
                    # Read in the page at once: the page redraws its rows, so an element found
                    # first and read later may be gone (stale).
                    report(index, True, wait.until(lambda d: d.execute_script(TEXT, argument)))
                elif kind == "gone":
                    wait.until(lambda d: not d.find_elements(By.CSS_SELECTOR, argument))
                    report(index, True)
                elif kind == "click":
                    wait.until(lambda d: d.execute_script(CLICK, argument))
                    report(index, True)
                elif kind == "type":
                    field = driver.find_element(By.CSS_SELECTOR, argument[0])
                    field.clear()
                    field.send_keys(argument[1])
                    report(index, True)
                elif kind == "text":
                    report(index, True, driver.execute_script(TEXT, argument))
                elif kind == "post":
                    report(index, True, driver.execute_async_script(POST, argument[0], argument[1]))
                elif kind == "screenshot":
                    driver.save_screenshot(argument)
                    report(index, True)
            except TimeoutException:
                report(index, False, "timed out after 30 s: " + json.dumps(step) + "; page: " + driver.find_element(By.TAG_NAME, "body").text[:1500]
                       + diagnosis())
                break
            except Exception as error:
                report(index, False, repr(error))
                break
    finally:
        driver.quit()
    """#
}
