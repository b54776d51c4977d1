public import Grove

/// A form with asynchronous validation, guarded submission and cancellation: the "Form
/// Validation" pattern of Oak's *Common Patterns*, with validation and submission as Codable
/// ``ValidateForm`` and ``SubmitForm`` requests that may run on another worker.
///
/// As in the seed, each field update clears the errors and starts the validation effect under the
/// id `"validate"`; a newer update replaces the validation in flight, so only the result for the
/// latest data arrives as `validationComplete`. `validate` asks for a validation and waits for it
/// in `validating` (the seed declared both but handled neither). One run of the machine is one
/// form: it ends when the form was submitted (successfully or not: the result says which) or
/// cancelled.
///
/// Differences from the seed, and why:
/// - `submit` checks the rules itself (the seed's guard did too, with `data.isValid`). An invalid
///   form is not ignored but shows its errors, and a validation still in flight is cancelled when
///   the form is sent.
/// - A validation service that cannot be reached does not leave the form without errors: the
///   rules are applied locally and delivered as `validationComplete`.
///
/// ```swift
/// let form = MachineHost(UserForm.self, io: handlers)
/// form.start()
/// try form.send(.updateName("Ada"))   // validates {name: "Ada"} under the id "validate"
/// try form.send(.submit)              // ignored until the form is valid; reveals its errors instead
/// ```
public enum UserForm: Machine {
    /// Where the form is. `submitted` and `cancelled` end the run.
    public enum State: Codable, Sendable, Equatable, Terminable {
        /// The user is filling in the form; `errors` are the rules the data breaks.
        case editing(FormData, errors: [ValidationError])
        /// `validate` was asked for; waiting for the validation's verdict.
        case validating(FormData)
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
            case .editing, .validating, .submitting: false
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
        /// Validates the current data and waits for the verdict, e.g. before the user touched any
        /// field.
        case validate
        /// Sends the form when it is valid; otherwise shows its errors.
        case submit
        /// The validation of the latest data finished with these errors.
        case validationComplete([ValidationError])
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

    /// The id of the validation in flight: a newer one replaces it.
    public static let validateID: EffectID = "validate"
    /// The id of the submission in flight.
    public static let submitID: EffectID = "submit"

    public static var initialState: State { .editing(FormData(), errors: []) }

    public static func update(_ state: inout State, event: Event) -> Effect {
        switch (state, event) {
        case (.editing(var data, _), .updateName(let name)), (.validating(var data), .updateName(let name)):
            data.name = name
            state = .editing(data, errors: [])
            return validate(data)

        case (.editing(var data, _), .updateEmail(let email)), (.validating(var data), .updateEmail(let email)):
            data.email = email
            state = .editing(data, errors: [])
            return validate(data)

        case (.editing(var data, _), .updatePhone(let phone)), (.validating(var data), .updatePhone(let phone)):
            data.phone = phone
            state = .editing(data, errors: [])
            return validate(data)

        case (.editing(let data, _), .validate):
            state = .validating(data)
            return validate(data)

        case (.editing(let data, _), .validationComplete(let errors)), (.validating(let data), .validationComplete(let errors)):
            state = .editing(data, errors: errors)
            return .none

        case (.editing(let data, _), .submit):
            let errors = data.validationErrors
            guard errors.isEmpty else {
                state = .editing(data, errors: errors)
                return .none
            }
            state = .submitting(data)
            return .merge([.cancel(validateID), submit(data)])

        case (.submitting, .submissionComplete(let result)):
            state = .submitted(result: result)
            return .none

        case (.editing, .cancel), (.validating, .cancel), (.submitting, .cancel):
            state = .cancelled
            return .merge([.cancel(validateID), .cancel(submitID)])

        default:
            return .unhandled
        }
    }

    /// Validates `data` under ``validateID``, replacing a validation in flight. When the service
    /// cannot answer, the rules are applied here.
    static func validate(_ data: FormData) -> Effect {
        .io(id: validateID, ValidateForm(form: data)) { result in
            switch result {
            case .success(let errors): .validationComplete(errors)
            case .failure: .validationComplete(data.validationErrors)
            }
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
