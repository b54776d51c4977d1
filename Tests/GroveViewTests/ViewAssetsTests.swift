import Foundation
import Testing
@testable import GroveView

/// The page works offline: everything it loads is served by the view itself.
@Suite(.timeLimit(.minutes(2)))
struct ViewAssetsTests {
    @Test func thePageLoadsNothingFromElsewhere() {
        for asset in [ViewAssets.page, ViewAssets.style, ViewAssets.script] {
            // The SVG namespace is a name, not something fetched; anything else with a scheme is.
            let fetched = asset.replacingOccurrences(of: "http://www.w3.org/2000/svg", with: "")
            #expect(!fetched.contains("http://") && !fetched.contains("https://") && !fetched.contains("//cdn"))
        }
        #expect(ViewAssets.page.contains(#"<script src="/view.js"></script>"#))
        #expect(ViewAssets.page.contains(#"href="/view.css""#))
    }
}
