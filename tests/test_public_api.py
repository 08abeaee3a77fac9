import dpverify


def test_all_matches_exports():
    assert sorted(dpverify.__all__) == sorted(set(dpverify.__all__))
    for name in dpverify.__all__:
        assert hasattr(dpverify, name), name
    public = {n for n in vars(dpverify) if not n.startswith("_") and not isinstance(getattr(dpverify, n), type(dpverify))}
    assert public <= set(dpverify.__all__), public - set(dpverify.__all__)
