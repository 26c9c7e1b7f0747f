def slugify(title):
    pass
