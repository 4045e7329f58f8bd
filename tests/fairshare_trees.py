"""Small builders for fair-sharing test trees."""

from sched_engine.fairshare.model import Tree, normalize_model


def job(name, demand, tasks=1000, weight=1.0, duration=1.0, arrival=0.0, departure=None):
    return {"name": name, "weight": weight, "demand": demand, "tasks": tasks,
            "duration": duration, "arrival": arrival, "departure": departure}


def dept(name, children, weight=1.0):
    return {"name": name, "weight": weight, "children": children}


def model(resources, children):
    return {"resources": [{"name": n, "capacity": c} for n, c in resources], "tree": dept("root", children)}


def tree(resources, children):
    return Tree.from_model(normalize_model(model(resources, children)))
