import CustomDump

/// How the test store shows two values that should have been equal: as TCA does, a
/// field-by-field diff of their dumps (swift-custom-dump's `diff`), so a mismatch deep in a large
/// state reads as the lines that differ rather than two whole structs to compare by eye.
enum Difference {
    /// `headline`, then the diff, each line indented. `first` is marked `-` and `second` `+`;
    /// their names (`expected`, `actual`) say which is which on the headline:
    ///
    /// ```
    /// state after add(2) differs from the expected one (- expected, + actual):
    ///     TallyState(
    ///   -   count: 3,
    ///   +   count: 2,
    ///       saved: nil
    ///     )
    /// ```
    /// Values that `==` tells apart but whose dumps are the same (an `==` that reads what a
    /// dump does not show) are printed whole instead, each on a line of its own.
    static func message(_ headline: String, _ first: Any, _ second: Any,
                        first firstName: String, second secondName: String) -> String {
        guard let difference = diff(first, second) else {
            let width = max(firstName.count, secondName.count)
            func line(_ name: String, _ value: Any) -> String {
                String(repeating: " ", count: width - name.count + 2) + "\(name): \(value)"
            }
            return [headline, line(firstName, first), line(secondName, second)].joined(separator: "\n")
        }
        let body = difference.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }
        return (["\(headline) (- \(firstName), + \(secondName)):"] + body).joined(separator: "\n")
    }
}
