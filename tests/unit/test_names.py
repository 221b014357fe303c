from catalog.names import person_key, preferred_spelling


def test_person_key_folds_accents_case_and_punctuation_but_not_initials() -> None:
    assert person_key("Jörg  Müller") == person_key("jorg muller")
    assert person_key("D. P. Kingma") != person_key("Diederik P. Kingma")
    assert person_key("ATLAS Collaboration") is None


def test_preferred_spelling_is_the_most_complete_then_the_most_frequent() -> None:
    assert preferred_spelling({"Christopher Re": 9, "Christopher Ré": 1}) == "Christopher Ré"
    assert preferred_spelling({"D. P. Kingma": 20, "Diederik P. Kingma": 2}) == "Diederik P. Kingma"
    assert preferred_spelling({"WEI ZHANG": 5, "Wei Zhang": 1}) == "Wei Zhang"
    assert preferred_spelling({"Wei Zhang": 1, "Wei Zheng": 3}) == "Wei Zheng"
    # A tie never depends on the order the spellings were seen in.
    assert preferred_spelling({"Ann Lee": 1, "Ann Lée": 1}) == preferred_spelling(
        {"Ann Lée": 1, "Ann Lee": 1}
    )
