public import Grove

/// A form with live validation, guarded submission and cancellation: the "Form Validation"
/// pattern of Oak's *Common Patterns*, with the submission as a Codable ``SubmitForm`` request.
///
/// One run of the machine is one form: it ends when the form was submitted (successfully or not:
/// the result says which) or cancelled, as in the seed.
///
/// Validation is pure and runs inside `update`, so the errors in `editing` always describe the
/// data next to them. The seed ran it as an effect with id `"validate"` only because Oak had no
/// other place for work; here that would add a round trip, possibly to another process, and a
/// window in which the state shows errors for data the user has already changed.
///
/// ```swift
/// let form = MachineHost(UserForm.self, io: handlers)
/// form.start()
/// try form.send(.updateName("Ada"))
/// try form.send(.submit)   // ignored until the form is valid; reveals its errors instead
/// ```
public enum UserForm: Machine {
    /// Where the form is. `submitted` and `cancelled` end the run.
    public enum State: Codable, Sendable, Equatable, Terminable {
        /// The user is filling in the form; `errors` are the rules the data breaks.
        case editing(FormData, errors: [ValidationError])
        /// The valid form was sent; waiting for the service.
        case submitting(FormData)
        /// The service answered, or could not be reached.
        case submitted(result: SubmissionResult)
        /// The user gave up.
        case cancelled

        /// `true` for `submitted` and `cancelled`.
        public var isTerminal: Bool {
            switch self {
            case .submitted, .cancelled: true
            case .editing, .submitting: false
            }
        }
    }

    /// What the user does, and what the submission reports.
    public enum Event: Codable, Sendable, Equatable {
        /// The user typed a name.
        case updateName(String)
        /// The user typed an email address.
        case updateEmail(String)
        /// The user typed a phone number.
        case updatePhone(String)
        /// Shows the errors of the current data, e.g. before the user touched any field.
        case validate
        /// Sends the form when it is valid; otherwise shows its errors.
        case submit
        /// The submission finished.
        case submissionComplete(SubmissionResult)
        /// Abandons the form, cancelling a submission in flight.
        case cancel
    }

    /// The fields of the form.
    public struct FormData: Codable, Sendable, Hashable {
        /// Required: at least one character that is not a space.
        public var name: String
        /// Required: `local@domain.tld`.
        public var email: String
        /// Required: 7 to 15 digits.
        public var phone: String

        /// A form with the given fields, empty by default.
        public init(name: String = "", email: String = "", phone: String = "") {
            self.name = name
            self.email = email
            self.phone = phone
        }

        /// The rules the data breaks, in field order; empty when the form can be submitted.
        public var validationErrors: [ValidationError] {
            var errors: [ValidationError] = []
            if !name.contains(where: { !$0.isWhitespace }) { errors.append(.nameRequired) }
            if !Self.isValidEmail(email) { errors.append(.invalidEmail) }
            if !Self.isValidPhone(phone) { errors.append(.invalidPhone) }
            return errors
        }

        /// `true` when the data breaks no rule.
        public var isValid: Bool { validationErrors.isEmpty }

        /// One `@`, something before it, and a dotted domain after it; no spaces.
        static func isValidEmail(_ email: String) -> Bool {
            guard !email.contains(where: \.isWhitespace) else { return false }
            let parts = email.split(separator: "@", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty else { return false }
            let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false)
            return labels.count >= 2 && labels.allSatisfy { !$0.isEmpty }
        }

        /// 7 to 15 digits (E.164), optionally led by `+` and grouped with spaces, dots, dashes or
        /// parentheses.
        static func isValidPhone(_ phone: String) -> Bool {
            var digits = 0
            for (offset, character) in phone.enumerated() {
                if character.isASCII, character.isWholeNumber {
                    digits += 1
                } else if character == "+", offset == 0 {
                    continue
                } else if !" .-()".contains(character) {
                    return false
                }
            }
            return (7...15).contains(digits)
        }
    }

    /// A rule the form data breaks.
    public enum ValidationError: String, Codable, Sendable, Hashable {
        /// The name is empty or only spaces.
        case nameRequired
        /// The email address is not `local@domain.tld`.
        case invalidEmail
        /// The phone number does not have 7 to 15 digits, or has other characters.
        case invalidPhone
    }

    /// How a submission ended.
    public enum SubmissionResult: Codable, Sendable, Hashable {
        /// The service stored the form and returned a confirmation reference.
        case accepted(confirmation: String)
        /// The service refused the form or could not be reached.
        case failed(message: String)
    }

    /// The id of the submission in flight.
    public static let submitID: EffectID = "submit"

    public static var initialState: State { .editing(FormData(), errors: []) }

    public static func update(_ state: inout State, event: Event) -> Effect {
        switch (state, event) {
        case (.editing(var data, _), .updateName(let name)):
            data.name = name
            state = .editing(data, errors: data.validationErrors)
            return .none

        case (.editing(var data, _), .updateEmail(let email)):
            data.email = email
            state = .editing(data, errors: data.validationErrors)
            return .none

        case (.editing(var data, _), .updatePhone(let phone)):
            data.phone = phone
            state = .editing(data, errors: data.validationErrors)
            return .none

        case (.editing(let data, _), .validate):
            state = .editing(data, errors: data.validationErrors)
            return .none

        case (.editing(let data, _), .submit):
            let errors = data.validationErrors
            guard errors.isEmpty else {
                state = .editing(data, errors: errors)
                return .none
            }
            state = .submitting(data)
            return submit(data)

        case (.submitting, .submissionComplete(let result)):
            state = .submitted(result: result)
            return .none

        case (.editing, .cancel), (.submitting, .cancel):
            state = .cancelled
            return .cancel(submitID)

        default:
            return .unhandled
        }
    }

    static func submit(_ data: FormData) -> Effect {
        .io(id: submitID, SubmitForm(form: data)) { result in
            switch result {
            case .success(let receipt): .submissionComplete(.accepted(confirmation: receipt.confirmation))
            case .failure(let failure): .submissionComplete(.failed(message: failure.message))
            }
        }
    }
}
