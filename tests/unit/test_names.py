from catalog.names import person_key
from people.names import ParsedName, names_compatible, parse_name, preferred_spelling, same_surname


def test_person_key_folds_accents_case_and_punctuation_but_not_initials() -> None:
    assert person_key("Jörg  Müller") == person_key("jorg muller")
    assert person_key("D. P. Kingma") != person_key("Diederik P. Kingma")
    assert person_key("ATLAS Collaboration") is None


def test_letters_without_an_accent_to_strip_are_transliterated() -> None:
    # "ø", "ł", "ı" and other scripts have no decomposition: they were kept, and so "Søgaard" was
    # another block than "Sogaard", never compared.
    assert person_key("Anders Søgaard") == person_key("Anders Sogaard") == "anders sogaard"
    assert person_key("Łukasz Kaiser") == "lukasz kaiser"
    assert person_key("Barış Yılmaz") == "baris yilmaz"
    assert person_key("Иван Петров") == "ivan petrov"
    assert {parse_name(n).block for n in ("Anders Søgaard", "A. Sogaard")} == {"sogaard a"}  # type: ignore[union-attr]


def test_preferred_spelling_is_the_most_complete_then_the_most_frequent() -> None:
    assert preferred_spelling({"Christopher Re": 9, "Christopher Ré": 1}) == "Christopher Ré"
    assert preferred_spelling({"D. P. Kingma": 20, "Diederik P. Kingma": 2}) == "Diederik P. Kingma"
    assert preferred_spelling({"WEI ZHANG": 5, "Wei Zhang": 1}) == "Wei Zhang"
    assert preferred_spelling({"Wei Zhang": 1, "Wei Zheng": 3}) == "Wei Zheng"
    # A tie never depends on the order the spellings were seen in.
    assert preferred_spelling({"Ann Lee": 1, "Ann Lée": 1}) == preferred_spelling(
        {"Ann Lée": 1, "Ann Lee": 1}
    )


def test_blocks_are_surname_and_first_initial_whatever_the_spelling() -> None:
    same = ["Yang Liu", "Y. Liu", "Liu, Yang", "YANG LIU", "Yáng Liú"]
    assert {parse_name(n).block for n in same} == {"liu y"}  # type: ignore[union-attr]
    assert parse_name("Jean-Pierre Dupont") == ParsedName("dupont", ("jean", "pierre"))
    assert parse_name("J.-P. Dupont") == ParsedName("dupont", ("j", "p"))
    assert parse_name("Ludwig van Beethoven") == ParsedName("beethoven", ("ludwig",))
    assert parse_name("Martin Luther King Jr.") == ParsedName("king", ("martin", "luther"))
    # Two-word names are also looked up in the other order (East Asian names are printed both ways).
    zhang_jun, jun_zhang = parse_name("Zhang Jun"), parse_name("Jun Zhang")
    assert zhang_jun is not None and jun_zhang is not None
    assert zhang_jun.swapped_block == jun_zhang.block and zhang_jun.is_swap_of(jun_zhang)
    assert parse_name("ATLAS Collaboration") is None


def test_names_compatible_initials_middle_names_and_hyphens() -> None:
    def ok(a: str, b: str) -> bool:
        pa, pb = parse_name(a), parse_name(b)
        assert pa is not None and pb is not None
        return names_compatible(pa, pb) and names_compatible(pb, pa)

    assert ok("Nancy F. Chen", "Nancy Chen")
    assert ok("Y. Liu", "Yang Liu")
    assert ok("D. P. Kingma", "Diederik P. Kingma")
    assert ok("Jianfeng Gao", "Jian-Feng Gao")
    assert ok("J.-P. Dupont", "Jean-Pierre Dupont")
    assert not ok("Yu Liu", "Yang Liu")
    assert not ok("Jian-Xun Wang", "Jian Wang")  # a hyphenated first name is one name, not a middle one
    assert ok("Ting Hao Huang", "Ting-Hao Huang")
    assert not ok("D. Q. Kingma", "Diederik P. Kingma")
    assert not ok("Nancy F. Chen", "Nancy G. Chen")
    # A middle name left out anywhere, in order: "Al" is kept, "Ahmed" is missing.
    assert ok("Shareefa Al Amer", "Shareefa Ahmed Al Amer")
    assert ok("A. C. Smith", "A. B. C. Smith")
    assert not ok("A. B. Smith", "A. C. D. Smith")  # "B." agrees with no later name
    assert not ok("Maria Jose Garcia", "Ana Maria Jose Garcia")  # the first name must agree


def test_hyphenated_initials_are_initials() -> None:
    for name in ("J-C. Martin", "J.-C. Martin", "J.C. Martin"):
        person = parse_name(name)
        assert person is not None
        assert (person.given, person.first, person.coauthor_key) == (("j", "c"), "j", "martin j")
    written = parse_name("Jean-Claude Martin")
    assert written is not None and written.first == "jeanclaude"  # written out: one first name


def test_particles_and_double_barrelled_surnames_are_filed_under_the_last_word() -> None:
    def parsed(name: str) -> ParsedName:
        person = parse_name(name)
        assert person is not None
        return person

    # A lower-case particle goes through nameparser, a capitalised one is a middle word: one block.
    assert parsed("Nisansa de Silva").block == parsed("Nisansa De Silva").block == "silva n"
    assert names_compatible(parsed("Nisansa de Silva"), parsed("Nisansa De Silva"))
    # The first part of a double-barrelled name is not a given name: the middle name still agrees.
    assert parsed("Jordan Boyd-Graber") == ParsedName("graber", ("jordan",))
    assert names_compatible(parsed("Jordan Boyd-Graber"), parsed("Jordan Lee Boyd-Graber"))
    assert parsed("Boyd-Graber, Jordan").block == parsed("Jordan Boyd-Graber").block
    assert parsed("Mausam .") == ParsedName("mausam", ())


def test_coauthor_keys_keep_a_hyphenated_first_name_whole() -> None:
    def key(name: str) -> str:
        person = parse_name(name)
        assert person is not None
        return person.coauthor_key

    assert key("Wei-jie Yu") == key("Weijie Yu") == "yu weijie"
    assert key("Wei-jie Yu") != key("Wei Yu")  # two people a loose key would make one co-author
    assert key("Nancy F. Chen") == key("Nancy Chen") == "chen nancy"
    assert key("J.-P. Dupont") == "dupont j"


def test_an_umlaut_agrees_with_both_of_its_ascii_spellings_and_an_e_alone_with_nothing() -> None:
    names = {n: parse_name(n) for n in ("H. Schütze", "H. Schuetze", "H. Schutze", "C. Suen", "C. Sun")}
    schutze, schuetze, plain, suen, sun = names.values()
    assert schutze and schuetze and plain and suen and sun
    assert same_surname(schutze, schuetze) and same_surname(schuetze, schutze)
    assert same_surname(schutze, plain)
    assert not same_surname(schuetze, plain)  # neither says an "e" stands for an umlaut
    assert not same_surname(suen, sun)
    assert (schutze.block, schutze.variant_block) == ("schutze h", "schuetze h")
    assert (schuetze.block, schuetze.variant_block) == ("schuetze h", "schutze h")
    bauer, sogaard = parse_name("Ralf Bauer"), parse_name("Anders Søgaard")
    assert bauer and bauer.variant == ""  # "au" is no umlaut
    assert sogaard and sogaard.variant == "soegaard"
